import { spawnSync } from "node:child_process";
import { resolve } from "node:path";
import { expand, type Places } from "./sandbox.js";
import type { ExpectStep } from "./scenario.js";

// An expect step's look at a git repository the scenario made: each commit
// named must be reachable from a ref there (a branch, a tag, refs/mu/...).
// An object the store merely holds is not enough: the next gc may prune it.
// Both engines run it the same way, on the real directory the steps use.

/** The refs of `repo` from which `commit` is reachable, or null when git cannot say. */
export function refsHolding(repo: string, commit: string): string[] | null {
  const r = spawnSync(
    "git",
    ["-C", repo, "for-each-ref", "--contains", commit, "--format=%(refname)", "refs/"],
    { encoding: "utf8" },
  );
  if (r.status !== 0) return null;
  return r.stdout.split("\n").filter((l) => l !== "");
}

export function checkReachable(box: Places, want: ExpectStep["expect"]): string[] {
  const r = want.reachable;
  if (!r) return [];
  const repo = resolve(box.root, expand(box, r.repo));
  const problems: string[] = [];
  for (const c of r.commits) {
    const commit = expand(box, c);
    const refs = refsHolding(repo, commit);
    if (refs === null) problems.push(`git in ${r.repo} does not know the commit ${commit}`);
    else if (refs.length === 0) problems.push(`no ref in ${r.repo} reaches the commit ${commit}`);
  }
  return problems;
}

import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { refsHolding } from "../runner/reachable.js";
import type { MuRun } from "./run-mu.js";

// The crew's --worktree agents: each does work in its tree (a commit of its
// own) before its close, and what every close then reported collected must
// be that commit and stay reachable from a ref in the checkout, whatever ran
// beside it (other closes, mu host fetch, into the same checkout).

const run = promisify(execFile);

/** An agent's tree on the sim's machine for `host`. */
export function treeOf(world: string, host: string, agent: string): string {
  return join(world, "machines", host, "mu", "trees", "main", agent);
}

/** Commits a file of its own in the agent's tree, as the agent would; returns the new HEAD. */
export async function doWork(tree: string, what: string): Promise<string> {
  const git = (...args: string[]) =>
    run("git", ["-c", "user.name=crew", "-c", "user.email=crew@localhost", "-C", tree, ...args]);
  await run("sh", ["-c", 'printf "%s\\n" "$2" > "$1/work"', "sh", tree, what]);
  await git("add", "work");
  await git("commit", "-qm", what);
  return (await git("rev-parse", "HEAD")).stdout.trim();
}

/** The commit a close's output says it collected, or null. */
export function collectedBy(r: MuRun): string | null {
  return /^collected ([0-9a-f]{40,64}) /m.exec(r.stdout)?.[1] ?? null;
}

/** Every commit a successful close reported collected that no ref in `checkout` reaches. */
export function unreachableCollects(checkout: string, runs: readonly MuRun[]): string[] {
  const broken: string[] = [];
  for (const r of runs) {
    const sha = r.verb === "agent close" && r.code === 0 ? collectedBy(r) : null;
    if (sha === null) continue;
    const refs = refsHolding(checkout, sha);
    if (refs === null || refs.length === 0)
      broken.push(
        `mu ${r.argv.join(" ")} reported ${sha} collected; no ref in the checkout reaches it`,
      );
  }
  return broken;
}

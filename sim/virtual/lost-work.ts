import { spawnSync } from "node:child_process";
import * as nodeFs from "node:fs";
import { join } from "node:path";
import { refsHolding } from "../runner/reachable.js";

// Work an agent committed in its tree must survive every verb: brought into
// the checkout under a ref, kept under a ref of the host's repository, or
// still the HEAD of a tree on the host. A verb that removes or replaces a
// tree whose HEAD nothing else names loses it for good. The workloads sign
// such commits "<agent>'s work"; one the host's repository holds that no
// ref there reaches and no tree's HEAD is (git fsck counts every worktree's
// HEAD, not their reflogs) must then be reachable in a checkout.

const git = (args: string[]) => spawnSync("git", args, { encoding: "utf8" });

/** The git directories under `dir`, down to `depth` levels, leaving worktrees out. */
function gitDirs(dir: string, depth: number): string[] {
  if (depth < 0 || !nodeFs.existsSync(dir) || dir.includes("/mu/trees/")) return [];
  const here = nodeFs.existsSync(join(dir, "HEAD")) && nodeFs.existsSync(join(dir, "objects"));
  if (here) return [dir];
  return nodeFs
    .readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .flatMap((d) => gitDirs(join(dir, d.name), depth - 1));
}

/** "<subject> (in <git dir>)" for each work commit nothing holds any more. */
export function lostWork(root: string, worldDir: string): string[] {
  const checkouts = gitDirs(root, 2).filter((g) => !g.startsWith(worldDir));
  const lost: string[] = [];
  for (const g of gitDirs(join(worldDir, "machines"), 4)) {
    // A tree removed by rm -rf is still listed until pruned, its HEAD with it.
    git(["--git-dir", g, "worktree", "prune"]);
    const r = git(["--git-dir", g, "fsck", "--unreachable", "--no-reflogs", "--no-progress"]);
    for (const [, sha = ""] of r.stdout.matchAll(/^unreachable commit ([0-9a-f]+)$/gm)) {
      const subject = git(["--git-dir", g, "log", "-1", "--format=%s", sha]).stdout.trim();
      if (!subject.endsWith("'s work")) continue;
      if (checkouts.some((c) => (refsHolding(c, sha) ?? []).length > 0)) continue;
      lost.push(`${subject} (in ${g.slice(worldDir.length + 1)})`);
    }
  }
  return lost;
}

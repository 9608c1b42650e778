import type { World } from "../plugin/world.js";
import { refsHolding } from "../runner/reachable.js";
import { argv, type LoadedScenario, type MuStep } from "../runner/scenario.js";

// A collect (a close, an in-life collect, `mu host fetch`) reports the
// commit it brought from one place on the host (an agent's tree, a host's
// repository) and pins it under a ref of the checkout. What it reports must
// be a commit a fetch from that very place brought (the sim notes each
// fetch's HEAD), and it must stay reachable from a ref: a collect that read
// a file every fetch of the checkout writes could report another's commit,
// leaving its own work unreferenced while its tree is removed.

/** A fetch the sim made: the HEAD of remoteCwd on a machine, as it noted it. */
export interface Fetched {
  remoteCwd: string;
  sha: string;
}

const REPORTED =
  /^(?:collected|fetched) ([0-9a-f]{40,64}) from ([^:\s]+):(\S+) into (.+) \((?:in-life, )?refs\/\S+\)$/gm;

/**
 * What each successful step reported collected or fetched that is not its
 * own place's commit, or that no ref of the checkout reaches. The lines name
 * no commit and no path: those differ from run to run of one seed.
 */
export function wrongCollects(
  verbs: readonly string[],
  stdouts: readonly string[],
  exits: readonly (number | null)[],
  fetched: readonly Fetched[],
): string[] {
  const broken: string[] = [];
  for (const [i, out] of stdouts.entries()) {
    if (exits[i] !== 0) continue;
    for (const m of (out ?? "").matchAll(REPORTED)) {
      const [, sha = "", host, remoteCwd, repo = ""] = m;
      const verb = verbs[i] ?? "mu";
      if (!fetched.some((f) => f.remoteCwd === remoteCwd && f.sha === sha))
        broken.push(
          `'${verb}' named a commit from ${host}:${remoteCwd} that no fetch from there brought: another fetch's`,
        );
      const refs = refsHolding(repo, sha);
      if (refs === null || refs.length === 0)
        broken.push(
          `'${verb}' named a commit from ${host}:${remoteCwd} that no ref in the checkout reaches`,
        );
    }
  }
  return broken;
}

/** A run's wrong collects: what each step reported against what the sim's fetches brought. */
export function runCollects(
  world: World,
  s: LoadedScenario,
  facts: { stdouts: readonly string[]; exits: readonly (number | null)[] },
): string[] {
  const fetched = world
    .transcript()
    .filter((l) => l.dir === "note" && "fetched" in l.msg)
    .map((l) => l.msg.fetched as Fetched);
  const verbs = s.steps.filter((st) => "mu" in st).map((st) => argv((st as MuStep).mu).join(" "));
  return wrongCollects(verbs, facts.stdouts, facts.exits, fetched);
}

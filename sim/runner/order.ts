import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import type { ScenarioResult } from "./execute.js";
import type { LoadedScenario } from "./scenario.js";

// The order a run takes its files in: the longest first, so the slow ones
// (a grace, a read deadline, a script that sleeps) overlap the many short
// ones instead of trailing alone at the end with the other workers idle.
// How long a file took comes from the last run's timings.json, else from
// the run kept in git; a file never timed counts its steps.

const FILE = "timings.json";

/** A file with no timing yet: about a second a step, the suite's rough mean. */
const guess = (s: LoadedScenario) => s.steps.length * 1000;

function lastTimings(reports: string): Record<string, number> {
  const path = join(reports, "latest", FILE);
  if (!existsSync(path)) return {};
  try {
    return JSON.parse(readFileSync(path, "utf8")) as Record<string, number>;
  } catch {
    return {};
  }
}

/**
 * Times from a whole run kept in git (scenarios/timings.json), for a clone
 * that has never run the suite, or a run into a fresh --reports directory
 * (CI, the bench): a file's steps say little of its sleeps and waits.
 */
function keptTimings(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(join(packageRoot(), "scenarios", FILE), "utf8")) as Record<
      string,
      number
    >;
  } catch {
    return {};
  }
}

export function longestFirst(queue: LoadedScenario[], reports: string): LoadedScenario[] {
  const known = { ...keptTimings(), ...lastTimings(reports) };
  const cost = (s: LoadedScenario) => known[s.scenario] ?? guess(s);
  return [...queue].sort((a, b) => cost(b) - cost(a));
}

/** This run's timings over the last run's, so a filtered run keeps the others'. */
export function writeTimings(reports: string, dir: string, results: ScenarioResult[]): void {
  const all = lastTimings(reports);
  for (const r of results) all[r.scenario.scenario] = r.ms;
  writeFileSync(join(dir, FILE), `${JSON.stringify(all, null, 1)}\n`);
}

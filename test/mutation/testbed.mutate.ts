import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../../host/package-root.js";
import { findScenarioFiles, loadScenario } from "../../sim/runner/load.js";
import { needsRealEngine } from "../../sim/virtual/can-run.js";
import { check, workload } from "../../sim/virtual/explore.js";
import { canaryFor } from "../../sim/virtual/invariants.js";
import { runVirtual } from "../../sim/virtual/run-scenario.js";
import { FOUND } from "../explore-found-seeds.js";

// What `npm run mutate` (stryker.config.mjs) counts as the testbed: every
// scenario file the virtual engine can run, then a short explorer run. One
// test per scenario and per seed, so Stryker's per-test coverage runs only
// the few that reach a mutant. The engine imports mu's TypeScript sources,
// which is what Stryker instruments; the real engine runs dist/ and could not
// see a mutant.

// Stryker's vitest runner runs tests in worker threads. The scenarios with
// sh steps, git or a working directory run there too: mu takes its
// directory from its ports, so nothing moves the process's own (which a
// worker thread may not do).
const loaded = findScenarioFiles(join(packageRoot(), "scenarios"))
  .map(loadScenario)
  .filter((s) => needsRealEngine(s) === undefined);
// A recheck names the scenarios written for its mutants to run first, so a
// kill is known early (the set runs with --bail 1); the set is the same.
const first = (process.env.MU_MUTATE_FIRST ?? "").split(",").filter(Boolean);
const scenarios = [
  ...loaded.filter((s) => first.includes(s.scenario)),
  ...loaded.filter((s) => !first.includes(s.scenario)),
];

// A few dozen seeds: enough to reach the verbs and faults the files do not,
// few enough that a mutant covered by all of them still runs in seconds.
// Then the seeds the explorer once broke: races between mu processes that no
// scenario file stages, kept as part of the testbed.
const EXPLORER_SEEDS = Number(process.env.MU_MUTATE_SEEDS ?? 30);

describe("scenario files on the virtual engine", () => {
  it.each(scenarios.map((s) => [s.scenario, s] as const))("scenario %s passes", async (_, s) => {
    const r = await runVirtual(s);
    expect(r.ran && r.failure).toBeFalsy();
  });
});

describe("the explorer", () => {
  const first = Array.from({ length: EXPLORER_SEEDS }, (_, k) => 1 + k);
  const seeds = [...first, ...FOUND.map(([seed]) => seed).filter((s) => !first.includes(s))];
  it.each(seeds)("seed %i holds every invariant", async (seed) => {
    const s = workload(seed, { MU_PLUGIN_CANARY: canaryFor(seed) });
    expect(await check(s, seed % 10 === 0)).toEqual([]);
  });
});

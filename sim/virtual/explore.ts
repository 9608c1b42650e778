import { createHash } from "node:crypto";
import type { LoadedScenario } from "../runner/scenario.js";
import { needsRealEngine } from "./can-run.js";
import { type PoolResult, runPool } from "./explore-pool.js";
import { canaryFor, invariants } from "./invariants.js";
import { runVirtual, type VirtualOutcome } from "./run-scenario.js";
import { type Families, workload } from "./workloads.js";

// The explorer: seeded random workloads (workloads.ts) under random faults,
// run on the virtual engine, each checked against the invariants a user
// relies on (invariants.ts). A run that breaks one is shrunk (steps dropped
// while it still breaks) and written out as a scenario file the real engine
// runs too.

export { workload } from "./workloads.js";

export interface Finding {
  seed: number;
  broken: string[];
  scenario: LoadedScenario;
  /** Each mu step's exit code in the shrunk run, so the real engine checks them too. */
  exits: (number | null)[];
  /** SIGKILL for a step that was killed. */
  signals: (string | null)[];
}

export async function check(s: LoadedScenario, twice = false): Promise<string[]> {
  if (needsRealEngine(s)) return [];
  const o = await runVirtual(s, { lenient: true });
  if (!o.ran) return [];
  const broken = invariants(o, s);
  if (twice) {
    // The same seed must give the same run: what each step answered, what
    // crossed the wire, what the world did.
    const again = await runVirtual(s, { lenient: true });
    const diverged = firstDifference(o, again);
    if (diverged) broken.push(`not deterministic: ${diverged}`);
  }
  return broken;
}

/** A run's bytes as one hash: each step's ending, what mu sent and printed, what the world applied, mu's database. */
export function digest(o: VirtualOutcome): string {
  if (!o.ran) return `not run: ${o.why}`;
  const h = createHash("sha256");
  h.update(JSON.stringify([o.exits, o.signals, o.effects, o.sent, o.output]));
  h.update(o.dbBytes ?? new Uint8Array());
  return h.digest("hex").slice(0, 16);
}

/** The first place two runs of one seed differ: a step's ending, or a message on the wire. */
function firstDifference(a: VirtualOutcome, b: VirtualOutcome): string | undefined {
  if (!a.ran || !b.ran) return a.ran === b.ran ? undefined : "one run ran and the other did not";
  for (let i = 0; i < Math.max(a.exits.length, b.exits.length); i++)
    if (a.exits[i] !== b.exits[i] || a.signals[i] !== b.signals[i])
      return `mu step ${i + 1} ended ${a.exits[i] ?? a.signals[i]}, then ${b.exits[i] ?? b.signals[i]}`;
  const x = a.sent.split("\n");
  const y = b.sent.split("\n");
  for (let i = 0; i < Math.max(x.length, y.length); i++)
    if (x[i] !== y[i])
      return `message ${i + 1} mu sent was ${x[i] ?? "absent"}, then ${y[i] ?? "absent"}`;
  if (JSON.stringify(a.effects) !== JSON.stringify(b.effects))
    return `the world applied ${JSON.stringify(a.effects)}, then ${JSON.stringify(b.effects)}`;
  return undefined;
}

/**
 * Steps a shrink must not drop. Time passing: the mu steps after it carry the
 * same offset, and dropping the world's half alone would skew the two clocks.
 * The settle and liveness steps, from the last clearing of the faults on:
 * they are the check, not the workload; dropping one (a close, say) makes a
 * later liveness check fail for a reason of the shrink's own making.
 */
function kept(steps: LoadedScenario["steps"], i: number): boolean {
  const st = steps[i];
  if (!st) return false;
  if ("world" in st && st.world.clockOffsetMs !== undefined) return true;
  // A join ends what ran in the background: a run without it would end with them still running.
  if ("join" in st) return true;
  for (let j = steps.length - 1; j >= 0; j--) {
    const x = steps[j];
    if (x && "world" in x && x.world.faults?.length === 0) return i >= j;
  }
  return false;
}

/**
 * Drops steps, one at a time from the end, for as long as the run still
 * breaks the invariant it first broke: another one (a liveness check that
 * fails only because its set-up was dropped) is not the same finding. Then
 * drops each wait (`elapseMs`) and each of the world's own faults the run
 * breaks exactly the same without.
 */
export async function shrink(s: LoadedScenario, broken?: string): Promise<LoadedScenario> {
  let cur = s;
  // Step numbers move as steps go, and so do the keys and ids mu draws from
  // its seeded randomness (a dropped step drew some): compare without them.
  const bare = (line: string) =>
    line.replace(/^step \d+ /, "step ").replace(/-[0-9a-f]{12,16}\b/g, "-*");
  const still = (b: string[]) =>
    broken === undefined ? b.length > 0 : b.map(bare).includes(bare(broken));
  const same = (a: string[], b: string[]) =>
    JSON.stringify(a.map(bare).sort()) === JSON.stringify(b.map(bare).sort());
  for (let changed = true; changed; ) {
    changed = false;
    // The first step registers the plugin; everything else may go, but what kept() keeps.
    for (let i = cur.steps.length - 1; i >= 1; i--) {
      if (kept(cur.steps, i)) continue;
      const next = { ...cur, steps: cur.steps.filter((_, j) => j !== i) };
      if (still(await check(next))) {
        cur = next;
        changed = true;
      }
    }
    // A wait that let a late answer or a lingering helper end, and a
    // nemesis's slow exit or lingering helper, are real time the written
    // file sleeps through on the real engine (over a minute after a late
    // answer); once the steps they served are gone they show nothing. Each
    // goes only where every line the run breaks stays as it was: a settle
    // cut short would add a failure of the shrink's own making.
    let was: string[] | undefined;
    const lighter = async (next: LoadedScenario) => {
      was ??= await check(cur);
      const got = await check(next);
      if (!same(got, was)) return;
      cur = next;
      was = got;
      changed = true;
    };
    for (let i = cur.steps.length - 1; i >= 1; i--) {
      const st = cur.steps[i];
      if (!st || !("world" in st) || !st.elapseMs) continue;
      const { elapseMs: _wait, ...rest } = st;
      await lighter({ ...cur, steps: cur.steps.map((x, j) => (j === i ? rest : x)) });
    }
    for (let i = (cur.world?.faults?.length ?? 0) - 1; i >= 0; i--) {
      const { faults = [], ...world } = cur.world ?? {};
      const left = faults.filter((_, j) => j !== i);
      await lighter({ ...cur, world: left.length > 0 ? { ...world, faults: left } : world });
    }
  }
  return cur;
}

export interface ExploreOptions {
  env?: Record<string, string>;
  /** Families beside the default two (workloads.ts): several mu at once, off with --serial. */
  families?: Families;
  onRun?: (seed: number) => void;
  /** Stop starting runs after this many wall milliseconds. */
  timeLimitMs?: number;
  /** Run seeds in this many child processes (explore-pool.ts); 1 runs them here. */
  workers?: number;
  /** False: report a finding as drawn, unshrunk (a measurement that only counts findings). */
  shrink?: boolean;
  /** Only every count-th seed from first + index (a shard of a fanned-out run). */
  shard?: { index: number; count: number };
}

/** The seeds a run (or its shard) takes, in order. */
export function seedsOf(first: number, runs: number, shard?: ExploreOptions["shard"]): number[] {
  const all = Array.from({ length: runs }, (_, k) => first + k);
  return shard ? all.filter((_, k) => k % shard.count === shard.index) : all;
}

/** How a run went: the finding, or how many seeds held and the last one tried. */
export interface Explored {
  finding?: Finding;
  held: number;
  last: number | undefined;
}

/** Runs the seeds in order until one breaks an invariant, they are used up, or time is. */
export async function exploreSeeds(
  seeds: readonly number[],
  opts: ExploreOptions = {},
): Promise<Explored> {
  const until = opts.timeLimitMs === undefined ? Infinity : Date.now() + opts.timeLimitMs;
  const env = opts.env ?? {};
  const families = opts.families ?? {};
  const pool =
    (opts.workers ?? 1) > 1
      ? await runPool(seeds, opts.workers ?? 1, env, until, opts.onRun, families)
      : await inOrder(seeds, env, until, opts.onRun, families);
  if (!pool.broken) return { held: pool.held, last: pool.last };
  const { seed, lines } = pool.broken;
  const s = workload(seed, { MU_PLUGIN_CANARY: canaryFor(seed), ...env }, families);
  const small = opts.shrink === false ? s : await shrink(s, lines[0]);
  const o = await runVirtual(small, { lenient: true });
  const finding = {
    seed,
    broken: o.ran ? invariants(o, small) : lines,
    scenario: small,
    exits: o.ran ? o.exits : [],
    signals: o.ran ? o.signals : [],
  };
  return { finding, held: pool.held, last: pool.last };
}

async function inOrder(
  seeds: readonly number[],
  env: Record<string, string>,
  until: number,
  onRun?: (seed: number) => void,
  families: Families = {},
): Promise<PoolResult> {
  let held = 0;
  let last: number | undefined;
  for (const seed of seeds) {
    if (Date.now() >= until) break;
    last = seed;
    onRun?.(seed);
    const s = workload(seed, { MU_PLUGIN_CANARY: canaryFor(seed), ...env }, families);
    // One run in ten is repeated, to catch a run that is not a function of its seed.
    const broken = await check(s, seed % 10 === 0);
    if (broken.length > 0) return { broken: { seed, lines: broken }, held, last };
    held++;
  }
  return { held, last };
}

/** Runs seeds first.. until one breaks an invariant, runs are used up, or time is. */
export async function explore(
  first: number,
  runs: number,
  opts: ExploreOptions = {},
): Promise<Finding | undefined> {
  return (await exploreSeeds(seedsOf(first, runs, opts.shard), opts)).finding;
}

const ONCE_PER_KEY = { "host.acquire": 1, "job.start": 1, "channel.send": 1 };

/** A finding as a scenario file: the steps, and the invariants as expectations. */
export function toYaml(f: Finding): string {
  const s = f.scenario;
  let mu = 0;
  const lines = [
    `scenario: ${s.scenario}`,
    `about: ${JSON.stringify(`Found by the explorer (seed ${f.seed}): ${f.broken[0] ?? ""}`)}`,
    `proves: ["explore.invariants"]`,
    `world: ${JSON.stringify(s.world)}`,
    ...(s.interleave !== undefined ? [`interleave: ${s.interleave}`] : []),
    ...(s.env && Object.keys(s.env).length > 0 ? [`env: ${JSON.stringify(s.env)}`] : []),
    "steps:",
    ...s.steps.map((st) => {
      if (!("mu" in st)) return `  - ${JSON.stringify(st)}`;
      const signal = f.signals[mu];
      const exit = f.exits[mu++] ?? 0;
      // A liveness check keeps the exit it expects: the real engine must fail there too.
      if (st.exit !== undefined) return `  - ${JSON.stringify(st)}`;
      if (signal) return `  - ${JSON.stringify({ ...st, signalled: signal })}`;
      return `  - ${JSON.stringify(exit === 0 ? st : { ...st, exit })}`;
    }),
    `  - ${JSON.stringify({ expect: { effectsPerKeyAtMost: ONCE_PER_KEY } })}`,
    "",
  ];
  return lines.join("\n");
}

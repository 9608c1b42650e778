import { join, resolve } from "node:path";
import { createFsFromVolume, Volume } from "memfs";
import { runCli } from "../../host/cli/run.js";
import { allIntents } from "../../host/effects/journal.js";
import { openStore } from "../../host/store/index.js";
import { muSlips } from "../plugin/mu-messages.js";
import { World, type WorldConfig, type WorldFs } from "../plugin/world.js";
import { checkWorld, type Observed } from "../runner/expect.js";
import { capture, checkMu, expandPatterns } from "../runner/judge.js";
import type { Ran } from "../runner/ran.js";
import { checkReachable } from "../runner/reachable.js";
import { expand, type Places } from "../runner/sandbox.js";
import { type ExpectStep, type LoadedScenario, type MuStep, muWords } from "../runner/scenario.js";
import { arrivalWaiter } from "./arrivals.js";
import { needsRealDir, needsRealEngine } from "./can-run.js";
import { runCollects } from "./collects.js";
import { Interleaver } from "./interleave.js";
import { lostWork } from "./lost-work.js";
import { livePanes, type VirtualPane, virtualMux } from "./mux.js";
import { outcomeOf, StepLog, type VirtualOutcome } from "./outcome.js";
import { leftBehind, type PluginGroup, stillRunning } from "./plugin-group.js";
import { virtualWorld } from "./ports.js";
import { readyForRuns } from "./preload.js";
import { VirtualMu } from "./process.js";
import {
  danglingRecords,
  deadTemps,
  readBack,
  restartAfterCut,
  viewDied,
  viewsKilledBeside,
} from "./read-back.js";
import { makeRealDir, type RealDir, shStep, treesOnHosts } from "./real-side.js";
import { virtualSpawner } from "./spawner.js";
import { stateDirProblems, stateDirReads, stateDirStep } from "./state-dir.js";
import { tapTrace } from "./trace-tap.js";
import { withoutRoot } from "./without-root.js";

// A scenario file on the virtual engine: each mu step is mu's own CLI run
// in-process as a fresh process in the engine's table, the sim in-process,
// time virtual, agents' panes entries in that table. A crash point or a
// plugin's killMu fault kills the invocation as SIGKILL would. sh steps and
// host scripts run for real in a temp directory while virtual time stands
// still (real-side.ts). A scenario whose steps need what only a real mu
// process gives is not run here, and says why (can-run.ts).

const SIM = "/opt/mu/mu-plugin-sim";
const DB = "/state/mu.db";

export type { VirtualOutcome };

export interface VirtualRun {
  /** Seeds mu's randomness (keys, message ids); the same seed, the same run. */
  seed?: number;
  /** Collect exit codes without judging them (the explorer judges invariants instead). */
  lenient?: boolean;
}

export async function runVirtual(
  s: LoadedScenario,
  opts: VirtualRun = {},
): Promise<VirtualOutcome> {
  const why = needsRealEngine(s);
  if (why) return { ran: false, why };
  await readyForRuns();
  const real = needsRealDir(s) ? makeRealDir() : undefined;
  try {
    const o = await runIn(s, opts, real);
    return real ? withoutRoot(o, real.root) : o;
  } finally {
    real?.remove();
  }
}

async function runIn(
  s: LoadedScenario,
  opts: VirtualRun,
  real: RealDir | undefined,
): Promise<VirtualOutcome> {
  const w = virtualWorld(opts.seed);
  const interleaver = s.interleave === undefined ? undefined : new Interleaver(s.interleave);
  w.clock.interleaver = interleaver;
  const t0 = w.clock.now();
  const worldFs = real?.worldFs ?? (createFsFromVolume(new Volume()) as unknown as WorldFs);
  const worldDir = real?.worldDir ?? "/world";
  const config: WorldConfig = { preset: "link-only", instance: "sim-1", ...s.world };
  const world = World.create(worldDir, config, worldFs, () => w.clock.now());
  await w.fs.mkdirp("/opt/mu");
  // Installed for good: a power cut in a run must not take the plugin with it.
  const sim = await w.fs.open(SIM, { mode: 0o755 });
  await sim.sync();
  await sim.close();
  await w.fs.syncDir("/opt/mu");
  const panes = new Map<string, VirtualPane>();
  const muxes = virtualMux(w.processes, worldFs, panes, w.clock);
  const places: Places = {
    root: real?.root ?? "/root",
    world: { dir: worldDir },
    vars: {},
    sim: SIM,
  };
  // mu's environment as the real runner builds it, so its plugin inherits
  // the same: nothing of the caller's but PATH.
  const base = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: join(places.root, "home") };
  const { received, seen } = arrivalWaiter(world);
  const background: Promise<string[]>[] = [];
  /** Every plugin group started, and what outlived the mu that stopped it. */
  const groups: PluginGroup[] = [];
  const outlived: string[] = [];
  /** Lines of the traces the steps that asked for one wrote. */
  const traces: string[] = [];
  const mu = async (
    args: string[],
    env: Record<string, string> = {},
    cut?: number,
    /** A step's cwd, relative to the root as the real runner takes it. */
    cwd?: string,
    /** False for a background run: the steps running meanwhile drive the clock for it. */
    drive = true,
  ): Promise<Ran> => {
    // Every invocation is a process of its own: its locks and intents name it.
    const proc = new VirtualMu(w.processes, interleaver);
    if (cut) w.fs.crashAfter(cut, () => proc.kill());
    const mine: PluginGroup[] = [];
    const kill = () => proc.kill();
    const spawner = virtualSpawner(w.processes, w.clock, worldFs, kill, received, mine, (f) =>
      w.fs.mayExec(f),
    );
    let stdout = "";
    let stderr = "";
    const words = args.map((a) => expand(places, a));
    const tapped = tapTrace(
      words,
      env,
      proc.ports({
        ...w.ports({ ...base, ...env }, resolve(places.root, expand(places, cwd ?? "."))),
        spawner,
        muxes,
      }),
      traces,
    );
    const run = runCli(words, {
      ports: tapped.ports,
      out: (t) => {
        if (proc.alive) stdout += t;
      },
      err: (t) => {
        if (proc.alive) stderr += t;
      },
    });
    // A killed run's promise never settles (its ports stop answering): its death ends the step.
    run.catch(() => {});
    const ended = Promise.race([run, proc.died.then(() => null)]);
    const code = await (drive ? w.clock.run(ended, s.hangAfterMs) : ended);
    // A cut counts the verb's disk operations: the trace's read of the state must not move it.
    if (code !== null && !cut && !proc.uncaught) {
      const finished = Promise.race([tapped.finish(code), proc.died]);
      await (drive ? w.clock.run(finished, s.hangAfterMs) : finished);
    }
    groups.push(...mine);
    // As Node reports an uncaught exception: its stack on stderr, exit 1.
    const err = proc.uncaught;
    if (err) {
      return { exit: 1, signal: null, stdout, stderr: `${stderr}${err.stack ?? String(err)}\n` };
    }
    if (!proc.alive) return { exit: null, signal: "SIGKILL", stdout, stderr };
    proc.exit();
    // A mu that ended by itself has stopped every plugin it started.
    outlived.push(...stillRunning(mine).map((p) => `'${args.join(" ")}' exited ${code}, ${p}`));
    return { exit: code, signal: null, stdout, stderr };
  };
  const log = new StepLog();
  const { exits } = log;
  const deadViews: string[] = [];
  const killedViews: string[] = [];
  const lostCommits: string[] = [];
  /** Records naming what is gone, looked for whenever no mu runs (the explorer's check). */
  const dangling = new Set<string>();
  const lookForDangling = async () => {
    if (opts.lenient) for (const d of await danglingRecords(w)) dangling.add(d);
  };
  /** The steps that overlapped since the last join, with their exits: what a join looks back on. */
  const sinceJoin: { words: string[]; env: Record<string, string>; exit: number | null }[] = [];
  const record = (at: number, r: Ran) => log.record(at, r, world.state().effects);
  let failure: string | undefined;
  /** The DB's bytes as the last damage step left them. */
  let snapshot: Buffer | undefined;
  const problem = (i: number, what: string) => {
    failure ??= `step ${i + 1}: ${what}`;
  };
  for (const [i, st] of s.steps.entries()) {
    if (failure) break;
    if ("world" in st) {
      if (st.elapseMs) await w.clock.advance(st.elapseMs);
      world.setConfig({ ...world.config(), ...st.world });
      continue;
    }
    if ("join" in st) {
      const all = await w.clock.run(Promise.all(background.splice(0)), s.hangAfterMs);
      for (const p of all.flat()) problem(i, p);
      await lookForDangling();
      if (opts.lenient) killedViews.push(...(await viewsKilledBeside(w, muxes, sinceJoin)));
      sinceJoin.length = 0;
      continue;
    }
    if ("mu" in st) {
      const step = st as MuStep;
      const words = muWords(step);
      const env = { ...s.env, ...step.env };
      // As on the real engine, a method that can no longer arrive (nothing
      // runs that could send it) ends the wait and the step goes on.
      if (step.afterSeen) await w.clock.run(seen(step.afterSeen), undefined, () => undefined);
      if (step.background) {
        const name = `mu ${words.join(" ")}`;
        // The explorer (lenient) judges a background run's ending as any
        // step's: it keeps its place among the mu steps, filled at its join.
        const at = opts.lenient ? log.reserve() : -1;
        // A new overlap starts: what ran alone before it is none of its business.
        if (background.length === 0) sinceJoin.length = 0;
        background.push(
          mu(words, env, undefined, step.cwd, false).then((r) => {
            if (at >= 0) record(at, r);
            sinceJoin.push({ words, env, exit: r.exit });
            return checkMu(expandPatterns(places, step), r, !opts.lenient, env).map(
              (p) => `${name}: ${p}`,
            );
          }),
        );
        continue;
      }
      // A power cut n disk operations into the step: mu dies there, and the
      // machine restarts from what its disk kept.
      const cut = env.MU_TESTBED_POWER_CUT ? Number(env.MU_TESTBED_POWER_CUT) : undefined;
      const before = cut ? await readBack(w) : undefined;
      const r = await mu(words, env, cut, step.cwd);
      if (before) lostCommits.push(...(await restartAfterCut(w, before, step.mu)));
      record(exits.length, r);
      if (background.length > 0) sinceJoin.push({ words, env, exit: r.exit });
      if (opts.lenient && r.exit === 0) {
        const dead = await viewDied(w, muxes, words, env);
        if (dead) deadViews.push(`'${String(step.mu)}' exited 0, but ${dead}`);
      }
      for (const p of checkMu(expandPatterns(places, step), r, !opts.lenient, env)) problem(i, p);
      for (const p of capture(places, step.capture, r)) problem(i, p);
      if (!opts.lenient) for (const p of outlived.splice(0)) problem(i, p);
      continue;
    }
    if ("sh" in st) {
      for (const p of await shStep(places, w.clock, st)) problem(i, p);
      continue;
    }
    if ("seed" in st || "install" in st || "damage" in st) {
      snapshot = (await stateDirStep(w, places, DB, st)) ?? snapshot;
      continue;
    }
    if ("expect" in st) {
      const observed: Observed = {
        world,
        intents: () => w.clock.run(openStore(w.ports()).read((db) => allIntents(db))),
        // The runner's own read, untraced as on the real engine.
        mu: (args) => mu(args, { ...s.env, MU_TRACE_DIR: "" }),
        ...stateDirReads(w, DB),
        traces: () => traces,
      };
      const want = (st as ExpectStep).expect;
      for (const p of stateDirProblems(w, DB, want, snapshot)) problem(i, p);
      for (const p of [...(await checkWorld(observed, want)), ...checkReachable(places, want)])
        problem(i, p);
    }
  }
  await lookForDangling();
  const facts = log.facts();
  // Looked at while the checkout is still there (the explorer's check).
  const collects = opts.lenient ? runCollects(world, s, facts) : [];
  if (!opts.lenient && !failure) failure = await leftBehind(w.clock, groups);
  // An agent's view left open is a process the real runner would find behind.
  const liveViews = livePanes(w.processes, panes);
  if (!opts.lenient && !failure && liveViews.length > 0)
    failure = `left a view running: ${liveViews.join(", ")}`;
  const slip = muSlips(world.transcript())[0];
  if (!opts.lenient && !failure && slip !== undefined) failure = `mu broke the protocol: ${slip}`;
  return outcomeOf(await readBack(w), world, {
    failure,
    ...facts,
    dbBytes: w.fs.peek(DB),
    virtualMs: w.clock.now() - t0,
    clockJumps: w.clock.jumps,
    deadViews,
    killedViews,
    lostCommits,
    outlived,
    dangling: [...dangling],
    wrongCollects: collects,
    traces,
    deadTemps: deadTemps(w),
    liveViews,
    treesOnHosts: real ? treesOnHosts(worldDir) : [],
    lostWork: real && opts.lenient ? lostWork(places.root, worldDir) : [],
  });
}

import { basename, dirname } from "node:path";
import { createFsFromVolume, Volume } from "memfs";
import { runCli } from "../../host/cli/run.js";
import { allIntents } from "../../host/effects/journal.js";
import { listHosts } from "../../host/hosts/records.js";
import { agentOf, allJobs } from "../../host/jobs/records.js";
import { openStore } from "../../host/store/index.js";
import { sqlJs } from "../../host/store/sqljs.js";
import { viewReadyMs } from "../../host/view/mux.js";
import { World, type WorldConfig, type WorldFs } from "../plugin/world.js";
import { messageCounts } from "../runner/counts.js";
import { capture, checkMu, expandPatterns, type Ran } from "../runner/execute.js";
import { checkWorld, type Observed } from "../runner/expect.js";
import { expand, type Places } from "../runner/sandbox.js";
import { argv, type ExpectStep, type LoadedScenario, type MuStep } from "../runner/scenario.js";
import { virtualMux } from "./mux.js";
import { type VirtualWorld, virtualWorld } from "./ports.js";
import { VirtualMu } from "./process.js";
import { virtualSpawner } from "./spawner.js";

// A scenario file on the virtual engine: each mu step is mu's own CLI run
// in-process as a fresh process in the engine's table, the sim in-process,
// time virtual, agents' panes entries in that table. A crash point or a
// plugin's killMu fault kills the invocation as SIGKILL would. A scenario
// whose steps need what only real processes give (signals sent from outside,
// real scripts on a host, files outside the world) is not run here, and says
// why.

const SIM = "/opt/mu/mu-plugin-sim";
const DB = "/state/mu.db";

export type VirtualOutcome =
  | { ran: false; why: string }
  | {
      ran: true;
      failure?: string;
      exits: (number | null)[];
      transcript: { in: Record<string, number>; out: Record<string, number> };
      effects: Record<string, number>;
      intents: number;
      /** How each mu step ended by signal (SIGKILL for a killed one), else null. */
      signals: (string | null)[];
      /** What the world holds, by acquire and start key, and what mu recorded. */
      worldHosts: Record<string, { handle: string; released: boolean }>;
      worldJobs: Record<string, { state: string }>;
      muHosts: { key: string; state: string }[];
      muJobs: { key: string; state: string }[];
      pendingKeys: string[];
      /** Why mu's database does not open, or fails its integrity check. */
      dbProblem?: string;
      /** Every message mu sent the plugin, a line each. */
      sent: string;
      /** Calls about a machine or job that went to another instance than it was made under. */
      crossings: string[];
      /** Everything mu printed, stdout and stderr. */
      output: string;
      dbBytes: Uint8Array | null;
      /** Virtual time the scenario took. */
      virtualMs: number;
      /** Reattaches that exited 0 while the view they recorded died within the readiness window. */
      deadViews: string[];
      /** Records that were there before a power cut and are gone after it. */
      lostCommits: string[];
    };

/** Why a scenario needs the real engine, or undefined when this one can run it. */
export function needsRealEngine(s: LoadedScenario): string | undefined {
  const faults = [
    ...(s.world?.faults ?? []),
    ...s.steps.flatMap((st) => ("world" in st ? (st.world.faults ?? []) : [])),
  ];
  for (const f of faults) {
    const kind = Object.keys(f.do)[0] ?? "";
    if (["setsidHelper", "execIgnoresTimeout"].includes(kind))
      return `a ${kind} fault needs real processes`;
  }
  if (s.world?.proxy) return "a proxied plugin is a real process";
  const replay = s.world?.replay;
  for (const st of s.steps) {
    // The virtual views read the recorded view's env, which a trace keeps
    // only with MU_TRACE_CONTENT=1.
    if (replay && !replay.content && "mu" in st && argv(st.mu)[0] === "agent")
      return "agents' views replayed from a trace that hashed their env";
    if ("sh" in st || "install" in st || "damage" in st || "join" in st)
      return "a step outside mu (sh, install, damage, join)";
    if ("expect" in st && (st.expect.db || st.expect.sessionsPeak))
      return "an expectation about real files";
    if (!("mu" in st)) continue;
    if (st.signal || st.background || st.cwd)
      return "signals, background runs or a working directory";
    const env = { ...s.env, ...st.env };
    const words = argv(st.mu);
    if ((words[0] === "agent" || words[0] === "wait") && env.MU_MUX !== "sim")
      return "agents' views in tmux, which runs real processes";
    if (words[0] === "host" && ["exec", "fetch", "push", "check"].includes(words[1] ?? ""))
      return "scripts that run for real on a host";
    if (words.some((w) => w.includes("${bin:") || w.includes("${root}")))
      return "files outside the world";
  }
  return undefined;
}

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
  // sql.js compiles its WebAssembly on a real thread, out of the clock's
  // sight; done first, it cannot overlap a run's virtual timers.
  await sqlJs();
  const w = virtualWorld(opts.seed);
  const t0 = w.clock.now();
  const worldFs = createFsFromVolume(new Volume()) as unknown as WorldFs;
  const config: WorldConfig = { preset: "link-only", instance: "sim-1", ...s.world };
  const world = World.create("/world", config, worldFs, () => w.clock.now());
  await w.fs.mkdirp("/opt/mu");
  await (await w.fs.open(SIM, { mode: 0o755 })).close();
  const muxes = virtualMux(w.processes, worldFs);
  const places: Places = { root: "/root", world: { dir: "/world" }, vars: {}, sim: SIM };
  const mu = async (
    args: string[],
    env: Record<string, string> = {},
    cut?: number,
  ): Promise<Ran> => {
    // Every invocation is a process of its own: its locks and intents name it.
    const proc = new VirtualMu(w.processes);
    if (cut) w.fs.crashAfter(cut, () => proc.kill());
    const spawner = virtualSpawner(w.processes, w.clock, worldFs, () => proc.kill());
    let stdout = "";
    let stderr = "";
    const run = runCli(
      args.map((a) => expand(places, a)),
      {
        ports: proc.ports({ ...w.ports(env), spawner, muxes }),
        out: (t) => {
          if (proc.alive) stdout += t;
        },
        err: (t) => {
          if (proc.alive) stderr += t;
        },
      },
    );
    // A killed run's promise never settles (its ports stop answering), so
    // the death itself ends the step.
    run.catch(() => {});
    const code = await w.clock.run(Promise.race([run, proc.died.then(() => null)]));
    if (!proc.alive) return { exit: null, signal: "SIGKILL", stdout, stderr };
    proc.exit();
    return { exit: code, signal: null, stdout, stderr };
  };
  const exits: (number | null)[] = [];
  const signals: (string | null)[] = [];
  const deadViews: string[] = [];
  const lostCommits: string[] = [];
  let output = "";
  let failure: string | undefined;
  const problem = (i: number, what: string) => {
    failure ??= `step ${i + 1}: ${what}`;
  };
  for (const [i, st] of s.steps.entries()) {
    if (failure) break;
    if ("world" in st) {
      world.setConfig({ ...world.config(), ...st.world });
      continue;
    }
    if ("mu" in st) {
      const step = st as MuStep;
      const env = { ...s.env, ...step.env };
      // A power cut n disk operations into the step: mu dies there, and the
      // machine restarts from what its disk kept.
      const cut = env.MU_TESTBED_POWER_CUT ? Number(env.MU_TESTBED_POWER_CUT) : undefined;
      const before = cut ? await readBack(w) : undefined;
      const r = await mu(argv(step.mu), env, cut);
      if (before) {
        w.fs.crashAfter(null);
        if (w.fs.down) w.fs.recover();
        const after = await readBack(w);
        // Only records the cut verb does not itself act on: its own commits
        // may or may not have happened (a re-acquire replaces a released host).
        const named = new Set(argv(step.mu));
        for (const h of before.hosts)
          if (!named.has(h.name) && !after.hosts.some((x) => x.key === h.key))
            lostCommits.push(
              `host ${h.key}, recorded before '${String(step.mu)}', is gone after a power cut`,
            );
        for (const j of before.jobs)
          if (!after.jobs.some((x) => x.key === j.key) && !argv(step.mu).includes("close"))
            lostCommits.push(
              `job ${j.key}, recorded before '${String(step.mu)}', is gone after a power cut`,
            );
      }
      exits.push(r.exit);
      signals.push(r.signal);
      output += r.stdout + r.stderr;
      if (opts.lenient && r.exit === 0) {
        const dead = await viewDied(w, muxes, argv(step.mu), { ...s.env, ...step.env });
        if (dead) deadViews.push(`'${String(step.mu)}' exited 0, but ${dead}`);
      }
      for (const p of checkMu(expandPatterns(places, step), r, !opts.lenient)) problem(i, p);
      for (const p of capture(places, step.capture, r)) problem(i, p);
      continue;
    }
    if ("expect" in st) {
      const observed: Observed = {
        world,
        intents: () => w.clock.run(openStore(w.ports()).read((db) => allIntents(db))),
        mu: (args) => mu(args, s.env ?? {}),
      };
      const want = (st as ExpectStep).expect;
      // The same check as the real engine's: nothing beside the DB in mu's state directory.
      if (want.leftoverFiles === "none") {
        const extra = w.fs.peekDir(dirname(DB)).filter((f) => f !== basename(DB));
        if (extra.length > 0) problem(i, `left beside the DB: ${extra.join(", ")}`);
      }
      for (const p of await checkWorld(observed, want)) problem(i, p);
    }
  }
  const db = await readBack(w);
  const transcript = world.transcript();
  const state = world.state();
  return {
    ran: true,
    ...(failure ? { failure } : {}),
    exits,
    signals,
    transcript: { in: messageCounts(transcript, "in"), out: messageCounts(transcript, "out") },
    effects: state.effects,
    intents: db.intents.length,
    worldHosts: state.hosts ?? {},
    worldJobs: Object.fromEntries(
      Object.entries(state.jobs ?? {}).map(([k, j]) => [k, { state: j.state }]),
    ),
    muHosts: db.hosts.map((h) => ({ key: h.key, state: h.state })),
    muJobs: db.jobs,
    pendingKeys: db.intents,
    ...(db.problem ? { dbProblem: db.problem } : {}),
    sent: transcript
      .filter((l) => l.dir === "in")
      .map((l) => JSON.stringify(l.msg))
      .join("\n"),
    crossings: transcript
      .filter((l) => l.dir === "note" && "otherInstance" in l.msg)
      .map((l) => JSON.stringify(l.msg.otherInstance)),
    output,
    dbBytes: w.fs.peek(DB),
    virtualMs: w.clock.now() - t0,
    deadViews,
    lostCommits,
  };
}

/**
 * After a reattach that exited 0: whether the view it recorded is dead once
 * the readiness window has passed (issue 15.2: a reattach reported success
 * with a view that died a moment later). The explorer's check only; it lets
 * that window of virtual time pass.
 */
async function viewDied(
  w: VirtualWorld,
  muxes: ReturnType<typeof virtualMux>,
  words: string[],
  env: Record<string, string>,
): Promise<string | undefined> {
  if (words[0] !== "agent" || words[1] !== "reattach" || !words[2]) return undefined;
  const ws = words.includes("-w") ? (words[words.indexOf("-w") + 1] ?? "main") : "main";
  const name = words[2];
  const ports = w.ports(env);
  await w.clock.run(ports.clock.sleep(viewReadyMs(ports.env)));
  const pane = await w.clock.run(
    openStore(ports).read((db) => agentOf(db, ws, name)?.pane ?? null),
  );
  const mux = muxes.sim?.(ports);
  if (!pane || !mux || (await mux.alive(pane))) return undefined;
  return `the view it recorded (${pane}) died within ${viewReadyMs(ports.env)} ms`;
}

/** What mu's database holds at the end, read as a new mu would; a store that does not open says why. */
async function readBack(w: VirtualWorld): Promise<{
  intents: string[];
  hosts: { key: string; state: string; name: string }[];
  jobs: { key: string; state: string }[];
  problem?: string;
}> {
  try {
    return await w.clock.run(
      openStore(w.ports()).read((db) => {
        const check = db.exec("PRAGMA integrity_check")[0]?.values[0]?.[0];
        return {
          intents: allIntents(db).map((i) => i.key),
          hosts: listHosts(db).map((h) => ({ key: h.key, state: h.state, name: h.name })),
          jobs: allJobs(db).map((j) => ({ key: j.key, state: j.state })),
          ...(check === "ok" ? {} : { problem: `integrity_check says ${String(check)}` }),
        };
      }),
    );
  } catch (err) {
    return { intents: [], hosts: [], jobs: [], problem: (err as Error).message };
  }
}

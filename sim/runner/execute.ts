import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, existsSync, openSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { runCli } from "../../host/cli/run.js";
import { allIntents } from "../../host/effects/journal.js";
import { packageRoot } from "../../host/package-root.js";
import { realPorts } from "../../host/ports/real.js";
import { openStore } from "../../host/store/index.js";
import { muSlips } from "../plugin/mu-messages.js";
import { messageCounts } from "./counts.js";
import { checkWorld } from "./expect.js";
import { capture, checkMu, checkSh, expandPatterns } from "./judge.js";
import { mutantEnv } from "./mutant-env.js";
import type { Ran } from "./ran.js";
import { checkReachable } from "./reachable.js";
import type { ScenarioResult, StepRecord } from "./result.js";
import { collect, runSh } from "./run-sh.js";
import { expand, install, makeSandbox, processesOf, type Sandbox } from "./sandbox.js";
import {
  describeStep,
  type ExpectStep,
  type LoadedScenario,
  type MuStep,
  muWords,
  type Step,
  seenTarget,
} from "./scenario.js";
import { damage, seed, stateDirProblems, stateDirReads } from "./state-dir.js";
import { readTraces, traceDirOf } from "./trace-expect.js";
import { changeWorlds } from "./via-proxy.js";
import { runVirtualOnly } from "./virtual-only.js";

export type { ScenarioResult, StepRecord } from "./result.js";

export interface RunOptions {
  /** Also read back the world's effects and the intents left, for comparing engines. */
  readBack?: boolean;
  /** Put the simulated plugin behind mu-plugin-sim --proxy (see via-proxy.ts). */
  viaProxy?: boolean;
  /** Run the file on the virtual engine, in a child process, as a virtualOnly one runs. */
  virtual?: boolean;
}

const muBin = () => join(packageRoot(), "dist/host/cli/mu.cjs");
/** mu with the planted bugs and pause points in (mu-testbed.ts): only a step that names one needs it. */
const testbedBin = () => join(packageRoot(), "dist/sim/runner/mu-testbed.js");

function seen(box: Sandbox, afterSeen: string): boolean {
  const { method, n } = seenTarget(afterSeen);
  return (messageCounts(box.world.transcript(), "in")[method] ?? 0) >= n;
}

async function waitSeen(box: Sandbox, method: string): Promise<void> {
  // Bounded: a scenario that never reaches the point fails, it does not hang.
  for (let i = 0; i < 1500 && !seen(box, method); i++) await new Promise((r) => setTimeout(r, 10));
}

/**
 * A step's stdinFile, opened for mu: a file or a device. A FIFO is refused,
 * since opening one waits for a writer and would stall every scenario.
 */
function openInput(box: Sandbox, file: string): number {
  const path = resolve(box.root, expand(box, file));
  const st = statSync(path);
  if (!st.isFile() && !st.isCharacterDevice())
    throw new Error(`stdinFile ${path} is neither a file nor a device`);
  return openSync(path, "r");
}

async function runMu(box: Sandbox, step: MuStep): Promise<Ran> {
  // A clean environment: nothing of the user's mu state may leak into a run.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(box.root, "home"),
    MU_STATE_DIR: box.state,
    TMPDIR: join(box.root, "tmp"),
    ...mutantEnv(),
    ...box.env,
    ...step.env,
  };
  const bin = env.MU_TESTBED_PLANT || env.MU_TESTBED_PAUSE ? testbedBin() : muBin();
  const cwd = step.cwd === undefined ? box.root : resolve(box.root, expand(box, step.cwd));
  if (env.MU_TRACE_DIR) env.MU_TRACE_DIR = expand(box, env.MU_TRACE_DIR);
  const traced = traceDirOf(env, cwd);
  if (traced) box.traceDirs.add(traced);
  const input = step.stdinFile === undefined ? undefined : openInput(box, step.stdinFile);
  let child: ChildProcess;
  try {
    child = spawn(process.execPath, [bin, ...muWords(step).map((a) => expand(box, a))], {
      env,
      cwd,
      stdio: [input ?? (step.stdin === undefined ? "ignore" : "pipe"), "pipe", "pipe"],
    });
  } finally {
    if (input !== undefined) closeSync(input);
  }
  // mu may stop reading before the end (a script past its limit): that is no failure of the step's.
  child.stdin?.on("error", () => {});
  child.stdin?.end(step.stdin);
  // Closed before mu's Node has started, so its first write meets EPIPE.
  if (step.stdoutClosed) child.stdout?.destroy();
  const done = collect(child);
  if (step.signal) {
    const { send, afterSeen, then } = step.signal;
    let exited = false;
    void done.then(() => {
      exited = true;
    });
    // Bounded: a scenario that never reaches the point fails, it does not hang.
    for (let i = 0; i < 1500 && !exited && !seen(box, afterSeen); i++)
      await new Promise((r) => setTimeout(r, 10));
    if (!exited) {
      child.kill(send);
      if (then) setTimeout(() => child.kill(then), 200);
    }
  }
  return done;
}

/** The world whose state says what the plugin really did. */
function truth(box: Sandbox) {
  return box.inner ?? box.world;
}

async function intentsLeft(box: Sandbox): Promise<ReturnType<typeof allIntents>> {
  if (!existsSync(box.db)) return [];
  return openStore(realPorts({ MU_DB_PATH: box.db })).read((db) => allIntents(db));
}

/**
 * An expectation's look at mu's records (plugin list, host list): the same
 * verb on the same database, run in this process. It only reads, so a
 * process of its own would prove nothing more and cost a Node start.
 */
async function readInProcess(box: Sandbox, args: string[]): Promise<Ran> {
  let stdout = "";
  let stderr = "";
  const ports = {
    ...realPorts({ HOME: join(box.root, "home"), MU_STATE_DIR: box.state, ...box.env }),
    // A crash point is for the scenario's own mu, never for this process.
    crash: () => Promise.reject(new Error("a crash point was reached by an expectation's read")),
  };
  const exit = await runCli(args, {
    ports,
    out: (t) => {
      stdout += t;
    },
    err: (t) => {
      stderr += t;
    },
  });
  return { exit, signal: null, stdout, stderr };
}

async function checkExpect(box: Sandbox, want: ExpectStep["expect"]): Promise<string[]> {
  const problems = stateDirProblems(box, want);
  problems.push(
    ...(await checkWorld(
      {
        // Behind a proxy, what crossed the wire is the proxy's; what was done, the plugin's.
        world: { transcript: () => box.world.transcript(), state: () => truth(box).state() },
        intents: () => intentsLeft(box),
        mu: (args) => readInProcess(box, args),
        ...stateDirReads(box),
        traces: () => readTraces(box.traceDirs),
      },
      want,
    )),
  );
  problems.push(...checkReachable(box, want));
  return problems;
}

async function runStep(box: Sandbox, step: Step): Promise<StepRecord> {
  const name = describeStep(step);
  let problems: string[] = [];
  const rec: StepRecord = { step: name, ok: true };
  if ("mu" in step) {
    const env = { ...box.env, ...step.env };
    if (step.afterSeen) await waitSeen(box, step.afterSeen);
    if (step.background) {
      box.background.push(
        runMu(box, step).then((r) => ({
          problems: checkMu(expandPatterns(box, step), r, true, env),
          step: name,
        })),
      );
      return rec;
    }
    const r = await runMu(box, step);
    Object.assign(rec, { exit: r.exit, signal: r.signal, stdout: r.stdout, stderr: r.stderr });
    problems = [
      ...checkMu(expandPatterns(box, step), r, true, env),
      ...capture(box, step.capture, r),
    ];
  } else if ("sh" in step) {
    const r = await runSh(box, step);
    Object.assign(rec, { exit: r.exit, stdout: r.stdout, stderr: r.stderr });
    problems = [...checkSh(step, r), ...capture(box, step.capture, r)];
  } else if ("join" in step) {
    const done = await Promise.all(box.background.splice(0));
    problems = done.flatMap((d) => d.problems.map((p) => `${d.step}: ${p}`));
  } else if ("damage" in step) {
    await damage(box, step.damage);
  } else if ("world" in step) {
    if (step.elapseMs) await new Promise((r) => setTimeout(r, step.elapseMs));
    if (box.inner) changeWorlds(box.world, box.inner, step.world);
    else box.world.setConfig({ ...box.world.config(), ...step.world });
  } else if ("seed" in step) {
    await seed(box, step.seed);
  } else if ("install" in step) {
    install(box, step.install);
  } else {
    problems = await checkExpect(box, step.expect);
  }
  if (problems.length > 0) {
    rec.ok = false;
    rec.detail = problems.join("; ");
  }
  return rec;
}

/** Kills what a scenario left running; returns what it found. */
async function reap(box: Sandbox, left = processesOf(box)): Promise<string[]> {
  for (const p of left) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  return left.map((p) => `${p.pid} ${p.cmd}`);
}

/** Runs one scenario in a sandbox of its own; stops at the first failed step. */
export async function runScenario(
  scenario: LoadedScenario,
  opts: RunOptions = {},
): Promise<ScenarioResult> {
  if (scenario.virtualOnly !== undefined || opts.virtual) return runVirtualOnly(scenario);
  const t0 = Date.now();
  const box = makeSandbox(scenario.world, scenario.env, opts.viaProxy);
  const steps: StepRecord[] = [];
  let failure: string | undefined;
  let transcript: unknown[] = [];
  let readBack: Pick<ScenarioResult, "effects" | "intents"> = {};
  try {
    for (const [i, step] of scenario.steps.entries()) {
      let rec: StepRecord;
      const startedAt = Date.now();
      try {
        rec = await runStep(box, step);
      } catch (err) {
        rec = { step: describeStep(step), ok: false, detail: (err as Error).message };
      }
      steps.push({ ...rec, startedAt, endedAt: Date.now() });
      if (!rec.ok) {
        failure = `step ${i + 1} (${rec.step}): ${rec.detail}`;
        break;
      }
    }
    // Let a plugin that is exiting on EOF finish before judging leftovers.
    let still = processesOf(box);
    for (let i = 0; i < 50 && still.length > 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      still = processesOf(box);
    }
    const left = await reap(box, still);
    if (left.length > 0 && failure === undefined)
      failure = `left processes behind: ${left.join("; ")}`;
    const heard = box.world.transcript();
    transcript = heard;
    const slip = muSlips(heard)[0];
    if (slip !== undefined && failure === undefined) failure = `mu broke the protocol: ${slip}`;
    // Only on request: opening the DB once more per scenario is not free.
    if (opts.readBack)
      readBack = {
        effects: truth(box).state().effects,
        intents: await intentsLeft(box).then(
          (left) => left.length,
          () => null,
        ),
      };
  } finally {
    rmSync(box.root, { recursive: true, force: true });
  }
  const result: ScenarioResult = {
    scenario,
    ok: failure === undefined,
    ms: Date.now() - t0,
    startedAt: t0,
    steps,
    transcript,
    ...readBack,
  };
  if (failure !== undefined) result.failure = failure;
  return result;
}

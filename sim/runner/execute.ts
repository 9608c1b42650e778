import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { runCli } from "../../host/cli/run.js";
import { allIntents } from "../../host/effects/journal.js";
import { packageRoot } from "../../host/package-root.js";
import { realPorts } from "../../host/ports/real.js";
import { openStore } from "../../host/store/index.js";
import { checkWorld } from "./expect.js";
import type { Ran } from "./ran.js";
import { expand, install, makeSandbox, type Places, processesOf, type Sandbox } from "./sandbox.js";
import {
  argv,
  describeStep,
  type ExpectStep,
  type LoadedScenario,
  type MuStep,
  type ShStep,
  type Step,
} from "./scenario.js";
import { changeWorlds } from "./via-proxy.js";

// The step runners' result, named here too for the engines that reuse them.
export type { Ran };

export interface StepRecord {
  step: string;
  ok: boolean;
  /** Wall-clock ms when the step began and ended, to place it among the transcript's messages. */
  startedAt?: number;
  endedAt?: number;
  detail?: string;
  exit?: number | null;
  signal?: string | null;
  stdout?: string;
  stderr?: string;
}

export interface ScenarioResult {
  scenario: LoadedScenario;
  ok: boolean;
  ms: number;
  /** Wall-clock ms when the scenario began: reports show times relative to it. */
  startedAt?: number;
  steps: StepRecord[];
  failure?: string;
  transcript: unknown[];
  /** With readBack: what the world applied, by effect and key, at the end. */
  effects?: Record<string, number>;
  /** With readBack: intents left in mu's journal; null when the DB does not read (a damage scenario's). */
  intents?: number | null;
}

export interface RunOptions {
  /** Also read back the world's effects and the intents left, for comparing engines. */
  readBack?: boolean;
  /** Put the simulated plugin behind mu-plugin-sim --proxy (see via-proxy.ts). */
  viaProxy?: boolean;
}

const muBin = () => join(packageRoot(), "dist/host/cli/main.js");

function seen(box: Sandbox, method: string): boolean {
  return box.world.transcript().some((e) => e.dir === "in" && e.msg.method === method);
}

async function waitSeen(box: Sandbox, method: string): Promise<void> {
  // Bounded: a scenario that never reaches the point fails, it does not hang.
  for (let i = 0; i < 1500 && !seen(box, method); i++) await new Promise((r) => setTimeout(r, 10));
}

/** A child's whole output and how it ended. */
function collect(child: ChildProcess): Promise<Ran> {
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (b: Buffer) => {
    stdout += b;
  });
  child.stderr?.on("data", (b: Buffer) => {
    stderr += b;
  });
  return new Promise((done, fail) => {
    child.on("error", fail);
    child.on("close", (exit, signal) => done({ exit, signal, stdout, stderr }));
  });
}

async function runMu(box: Sandbox, step: MuStep): Promise<Ran> {
  // A clean environment: nothing of the user's mu state may leak into a run.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(box.root, "home"),
    MU_STATE_DIR: box.state,
    ...box.env,
    ...step.env,
  };
  const child = spawn(process.execPath, [muBin(), ...argv(step.mu).map((a) => expand(box, a))], {
    env,
    cwd: step.cwd === undefined ? box.root : resolve(box.root, expand(box, step.cwd)),
    stdio: ["ignore", "pipe", "pipe"],
  });
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

/** Output patterns may name captured values (${var:NAME}) and sandbox paths too. */
export function expandPatterns(box: Places, step: MuStep): MuStep {
  return {
    ...step,
    ...(step.stdout !== undefined ? { stdout: expand(box, step.stdout) } : {}),
    ...(step.stderr !== undefined ? { stderr: expand(box, step.stderr) } : {}),
  };
}

/** Keeps each pattern's first group, from stdout then stderr, for later ${var:NAME}. */
export function capture(box: Places, want: Record<string, string> | undefined, r: Ran): string[] {
  const problems: string[] = [];
  for (const [name, pattern] of Object.entries(want ?? {})) {
    const m = new RegExp(pattern).exec(r.stdout) ?? new RegExp(pattern).exec(r.stderr);
    if (m?.[1] === undefined)
      problems.push(`nothing to capture as ${name}: /${pattern}/ did not match`);
    else box.vars[name] = m[1];
  }
  return problems;
}

/** A setup or inspection script: git gets a fixed identity so commits work anywhere. */
export function runSh(box: Places, step: ShStep): Promise<Ran> {
  const who = { name: "mu scenario", email: "scenario@mu.invalid" };
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(box.root, "home"),
    GIT_AUTHOR_NAME: who.name,
    GIT_AUTHOR_EMAIL: who.email,
    GIT_COMMITTER_NAME: who.name,
    GIT_COMMITTER_EMAIL: who.email,
    GIT_CONFIG_NOSYSTEM: "1",
  };
  const child = spawn("/bin/sh", ["-ec", expand(box, step.sh)], {
    env,
    cwd: box.root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return collect(child);
}

/** The world whose state says what the plugin really did. */
function truth(box: Sandbox) {
  return box.inner ?? box.world;
}

async function intentsLeft(box: Sandbox): Promise<ReturnType<typeof allIntents>> {
  if (!existsSync(box.db)) return [];
  return openStore(realPorts({ MU_DB_PATH: box.db })).read((db) => allIntents(db));
}

/** What a mu step's run got wrong; `judgeExit` false leaves its exit code alone (the explorer judges invariants). */
export function checkMu(step: MuStep, r: Ran, judgeExit = true): string[] {
  const problems: string[] = [];
  if (judgeExit && step.signalled !== undefined) {
    if (r.signal !== step.signalled)
      problems.push(`ended by ${r.signal ?? `exit ${r.exit}`}, expected ${step.signalled}`);
  } else if (judgeExit) {
    const want = step.exit ?? 0;
    if (r.exit !== want) problems.push(`exit ${r.exit ?? r.signal}, expected ${want}`);
  }
  if (step.stdout !== undefined && !new RegExp(step.stdout).test(r.stdout)) {
    problems.push(
      `stdout does not match /${step.stdout}/: ${JSON.stringify(r.stdout.slice(0, 300))}`,
    );
  }
  if (step.stderr !== undefined && !new RegExp(step.stderr).test(r.stderr)) {
    problems.push(
      `stderr does not match /${step.stderr}/: ${JSON.stringify(r.stderr.slice(0, 300))}`,
    );
  }
  if (step.stderrLines !== undefined) {
    const lines = r.stderr === "" ? 0 : r.stderr.replace(/\n$/, "").split("\n").length;
    if (lines !== step.stderrLines)
      problems.push(`stderr has ${lines} lines, expected ${step.stderrLines}`);
  }
  return problems;
}

/** What an sh step's run got wrong. */
export function checkSh(step: ShStep, r: Ran): string[] {
  const problems: string[] = [];
  if (r.exit !== (step.exit ?? 0))
    problems.push(
      `exit ${r.exit ?? r.signal}, expected ${step.exit ?? 0}: ${r.stderr.slice(0, 300)}`,
    );
  if (step.stdout !== undefined && !new RegExp(step.stdout).test(r.stdout))
    problems.push(
      `stdout does not match /${step.stdout}/: ${JSON.stringify(r.stdout.slice(0, 300))}`,
    );
  return problems;
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

/** A DB file's bytes as a damage step leaves them; `noise` makes the garbage. */
export function damaged(
  bytes: Buffer,
  how: "truncate-half" | "truncate-odd" | "garbage" | "zero",
  noise: (n: number) => Buffer = randomBytes,
): Buffer {
  return {
    "truncate-half": () => bytes.subarray(0, Math.floor(bytes.length / 2)),
    "truncate-odd": () => bytes.subarray(0, bytes.length - 1000),
    garbage: () => noise(bytes.length),
    zero: () => Buffer.alloc(0),
  }[how]();
}

function damage(box: Sandbox, how: "truncate-half" | "truncate-odd" | "garbage" | "zero"): void {
  const next = damaged(readFileSync(box.db), how);
  writeFileSync(box.db, next);
  box.snapshot = Buffer.from(next);
}

async function checkExpect(box: Sandbox, want: ExpectStep["expect"]): Promise<string[]> {
  const problems: string[] = [];
  if (want.db === "unchanged") {
    if (!box.snapshot) problems.push("no damage snapshot to compare with");
    else if (!readFileSync(box.db).equals(box.snapshot)) problems.push("the DB file changed");
  }
  if (want.leftoverFiles === "none") {
    const extra = (existsSync(box.state) ? readdirSync(box.state) : []).filter(
      (f) => f !== "mu.db",
    );
    if (extra.length > 0) problems.push(`left beside the DB: ${extra.join(", ")}`);
  }
  problems.push(
    ...(await checkWorld(
      {
        // Behind a proxy, what crossed the wire is the proxy's; what was done, the plugin's.
        world: { transcript: () => box.world.transcript(), state: () => truth(box).state() },
        intents: () => intentsLeft(box),
        mu: (args) => readInProcess(box, args),
      },
      want,
    )),
  );
  return problems;
}

async function runStep(box: Sandbox, step: Step): Promise<StepRecord> {
  const name = describeStep(step);
  let problems: string[] = [];
  const rec: StepRecord = { step: name, ok: true };
  if ("mu" in step) {
    if (step.afterSeen) await waitSeen(box, step.afterSeen);
    if (step.background) {
      box.background.push(
        runMu(box, step).then((r) => ({ problems: checkMu(step, r), step: name })),
      );
      return rec;
    }
    const r = await runMu(box, step);
    Object.assign(rec, { exit: r.exit, signal: r.signal, stdout: r.stdout, stderr: r.stderr });
    problems = [...checkMu(expandPatterns(box, step), r), ...capture(box, step.capture, r)];
  } else if ("sh" in step) {
    const r = await runSh(box, step);
    Object.assign(rec, { exit: r.exit, stdout: r.stdout, stderr: r.stderr });
    problems = checkSh(step, r);
  } else if ("join" in step) {
    const done = await Promise.all(box.background.splice(0));
    problems = done.flatMap((d) => d.problems.map((p) => `${d.step}: ${p}`));
  } else if ("damage" in step) {
    damage(box, step.damage.db);
  } else if ("world" in step) {
    if (box.inner) changeWorlds(box.world, box.inner, step.world);
    else box.world.setConfig({ ...box.world.config(), ...step.world });
  } else if ("install" in step) {
    install(box, step.install.as, step.install.mode, step.install.kind);
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
    transcript = box.world.transcript();
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

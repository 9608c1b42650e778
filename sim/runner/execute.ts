import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { argv, describeStep, type LoadedScenario, type MuStep, type Step } from "./scenario.js";

export interface StepRecord {
  step: string;
  ok: boolean;
  detail?: string;
  exit?: number | null;
  stdout?: string;
  stderr?: string;
}

export interface ScenarioResult {
  scenario: LoadedScenario;
  ok: boolean;
  ms: number;
  steps: StepRecord[];
  failure?: string;
}

interface Sandbox {
  root: string;
  state: string;
  db: string;
  snapshot?: Buffer;
}

const muBin = () => join(packageRoot(), "dist/host/cli/main.js");

function runMu(
  box: Sandbox,
  step: MuStep,
): Promise<{ exit: number | null; stdout: string; stderr: string }> {
  // A clean environment: nothing of the user's mu state may leak into a run.
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(box.root, "home"),
    MU_STATE_DIR: box.state,
    ...step.env,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [muBin(), ...argv(step.mu)], {
      env,
      cwd: box.root,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => {
      stdout += b;
    });
    child.stderr.on("data", (b: Buffer) => {
      stderr += b;
    });
    child.on("error", reject);
    child.on("close", (code) => resolve({ exit: code, stdout, stderr }));
  });
}

function damage(box: Sandbox, how: "truncate-half" | "truncate-odd" | "garbage" | "zero"): void {
  const bytes = readFileSync(box.db);
  let next: Buffer;
  switch (how) {
    case "truncate-half":
      next = bytes.subarray(0, Math.floor(bytes.length / 2));
      break;
    case "truncate-odd":
      next = bytes.subarray(0, bytes.length - 1000);
      break;
    case "garbage":
      next = randomBytes(bytes.length);
      break;
    case "zero":
      next = Buffer.alloc(0);
      break;
  }
  writeFileSync(box.db, next);
  box.snapshot = Buffer.from(next);
}

async function runStep(box: Sandbox, step: Step): Promise<StepRecord> {
  const name = describeStep(step);
  if ("mu" in step) {
    const r = await runMu(box, step);
    const problems: string[] = [];
    const want = step.exit ?? 0;
    if (r.exit !== want) problems.push(`exit ${r.exit}, expected ${want}`);
    if (step.stdout !== undefined && !new RegExp(step.stdout).test(r.stdout)) {
      problems.push(`stdout does not match /${step.stdout}/`);
    }
    if (step.stderr !== undefined && !new RegExp(step.stderr).test(r.stderr)) {
      problems.push(`stderr does not match /${step.stderr}/`);
    }
    if (step.stderrLines !== undefined) {
      const lines = r.stderr === "" ? 0 : r.stderr.replace(/\n$/, "").split("\n").length;
      if (lines !== step.stderrLines)
        problems.push(`stderr has ${lines} lines, expected ${step.stderrLines}`);
    }
    const rec: StepRecord = {
      step: name,
      ok: problems.length === 0,
      exit: r.exit,
      stdout: r.stdout,
      stderr: r.stderr,
    };
    if (problems.length > 0) rec.detail = problems.join("; ");
    return rec;
  }
  if ("damage" in step) {
    damage(box, step.damage.db);
    return { step: name, ok: true };
  }
  const problems: string[] = [];
  if (step.expect.db === "unchanged") {
    if (!box.snapshot) problems.push("no damage snapshot to compare with");
    else if (!readFileSync(box.db).equals(box.snapshot)) problems.push("the DB file changed");
  }
  if (step.expect.leftoverFiles === "none") {
    const extra = (existsSync(box.state) ? readdirSync(box.state) : []).filter(
      (f) => f !== "mu.db",
    );
    if (extra.length > 0) problems.push(`left beside the DB: ${extra.join(", ")}`);
  }
  const rec: StepRecord = { step: name, ok: problems.length === 0 };
  if (problems.length > 0) rec.detail = problems.join("; ");
  return rec;
}

/** Runs one scenario in a sandbox of its own; stops at the first failed step. */
export async function runScenario(scenario: LoadedScenario): Promise<ScenarioResult> {
  const t0 = Date.now();
  const root = mkdtempSync(join(tmpdir(), "mu-scenario-"));
  const box: Sandbox = { root, state: join(root, "state"), db: join(root, "state", "mu.db") };
  mkdirSync(join(root, "home"));
  const steps: StepRecord[] = [];
  let failure: string | undefined;
  try {
    for (const [i, step] of scenario.steps.entries()) {
      let rec: StepRecord;
      try {
        rec = await runStep(box, step);
      } catch (err) {
        rec = { step: describeStep(step), ok: false, detail: (err as Error).message };
      }
      steps.push(rec);
      if (!rec.ok) {
        failure = `step ${i + 1} (${rec.step}): ${rec.detail}`;
        break;
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  const result: ScenarioResult = {
    scenario,
    ok: failure === undefined,
    ms: Date.now() - t0,
    steps,
  };
  if (failure !== undefined) result.failure = failure;
  return result;
}

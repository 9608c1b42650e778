import { spawn } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import type { OneFileOutcome } from "../virtual/one-file-main.js";
import type { ScenarioResult, StepRecord } from "./result.js";
import { describeStep, type LoadedScenario } from "./scenario.js";

// A file that waits out hours of mu's timers (`virtualOnly`) runs on the
// virtual engine, where those hours cost seconds. It runs in a child
// process: the engine spins its clock loop on the event loop, which would
// stall the real scenarios the runner drives beside it.

export function runVirtualOnly(s: LoadedScenario): Promise<ScenarioResult> {
  const t0 = Date.now();
  const main = join(packageRoot(), "dist/sim/virtual/one-file-main.js");
  const child = spawn(process.execPath, [main], { stdio: ["pipe", "pipe", "pipe"] });
  // The scenario as loaded here, not its file again: what the runner holds is what runs.
  // A child that died first shows as its exit, below, not as an EPIPE here.
  child.stdin.on("error", () => {});
  child.stdin.end(JSON.stringify(s));
  let out = "";
  let err = "";
  child.stdout.on("data", (b: Buffer) => {
    out += b;
  });
  child.stderr.on("data", (b: Buffer) => {
    err += b;
  });
  return new Promise((done) => {
    child.on("close", (code) => {
      let r: OneFileOutcome | undefined;
      try {
        r = JSON.parse(out.trim().split("\n").at(-1) ?? "") as OneFileOutcome;
      } catch {
        r = undefined;
      }
      const failure = r
        ? r.failure
        : `the virtual engine's child exited ${code}: ${crashLine(err)}`;
      const muSteps = s.steps.filter((st) => "mu" in st).map(describeStep);
      const steps: StepRecord[] = (r?.exits ?? []).map((exit, i) => ({
        step: muSteps[i] ?? "mu",
        ok: true,
        exit,
        signal: r?.signals?.[i] ?? null,
        detail: "virtual engine: exit and signal kept, output not",
      }));
      done({
        scenario: s,
        ok: failure === undefined,
        ms: Date.now() - t0,
        startedAt: t0,
        steps,
        ...(failure ? { failure: `virtual engine: ${failure}` } : {}),
        transcript: [],
        virtual: { counts: r?.counts ?? { in: {}, out: {} }, virtualMs: r?.virtualMs ?? 0 },
      });
    });
  });
}

// Node ends a crash's stderr with its own version line; the error's message
// is the line that says what went wrong.
function crashLine(stderr: string): string {
  const lines = stderr.trim().split("\n");
  return lines.find((l) => /^[A-Za-z]*Error: /.test(l)) ?? lines.at(-1) ?? "";
}

import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { packageRoot } from "../host/package-root.js";
import { World } from "../sim/plugin/world.js";
import { runScenario, type ScenarioResult } from "../sim/runner/execute.js";
import type { LoadedScenario, MuStep } from "../sim/runner/scenario.js";
import { muProcess } from "./helpers.js";

// From a field session to a scenario file: a session against the sim is
// traced (a spawn whose job.start intent survives a SIGKILL of mu at a crash
// point, then the spawn again, which resolves the start by a lookup: spec
// "Effects and replay"), converted by scenario:from-trace, and the file runs
// on the real engine against the replayed plugin with the same exit codes,
// the same resolution and no intent left.

const sim = join(packageRoot(), "sim/bin/mu-plugin-sim");
/** The runner's ${…} words, spelt so no one mistakes them for template strings. */
const placeholder = (name: string) => `\${${name}}`;
let root: string;
const recorded: { code: number | null; signal: NodeJS.Signals | null; stderr: string }[] = [];
let scenario: LoadedScenario;
let result: ScenarioResult;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "mu-trace-replay-"));
  World.create(join(root, "world"), { preset: "link-job", instance: "sim-1" });
  const env = {
    MU_STATE_DIR: join(root, "state"),
    HOME: root,
    MU_TRACE_DIR: join(root, "traces"),
    MU_MUX: "sim",
  };
  const session: [string[], Record<string, string>?][] = [
    [["plugin", "add", "sim", "--", sim, "--world", join(root, "world")]],
    [["host", "add", "box", "--plugin", "sim"]],
    [["agent", "spawn", "a", "--host", "box"], { MU_CRASH_AT: "effect.request-written" }],
    [["agent", "spawn", "a", "--host", "box"]],
    [["agent", "close", "a"]],
  ];
  for (const [args, more] of session) recorded.push(muProcess(args, { ...env, ...more }));
  const traces = readdirSync(join(root, "traces")).map((f) => join(root, "traces", f));
  const out = join(root, "from-trace.yaml");
  const conv = spawnSync(
    process.execPath,
    [join(packageRoot(), "dist/sim/trace/from-trace-main.js"), ...traces, "--out", out],
    { encoding: "utf8" },
  );
  expect(conv.status, conv.stderr).toBe(0);
  scenario = { ...(parse(readFileSync(out, "utf8")) as LoadedScenario), file: out };
  // The recording's own world is gone: only the trace can answer now.
  rmSync(join(root, "world"), { recursive: true, force: true });
  result = await runScenario(scenario, { readBack: true });
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("scenario:from-trace", () => {
  it("recorded the session it is meant to: the intent survived the crash and was resolved", () => {
    expect(recorded.map((r) => r.signal ?? r.code)).toEqual([0, 0, "SIGKILL", 0, 0]);
    expect(recorded[3]?.stderr).toMatch(/start[.]lookup[.]found/);
  });

  it("turns each invocation into a step with its exit, signal and crash point", () => {
    const steps = scenario.steps.filter((s): s is MuStep => "mu" in s);
    expect(steps.map((s) => s.mu)).toEqual([
      ["plugin", "add", "sim", "--", placeholder("sim"), "--world", placeholder("world")],
      ["host", "add", "box", "--plugin", "sim"],
      ["agent", "spawn", "a", "--host", "box"],
      ["agent", "spawn", "a", "--host", "box"],
      ["agent", "close", "a"],
    ]);
    expect(steps[2]).toMatchObject({
      signalled: "SIGKILL",
      env: { MU_CRASH_AT: "effect.request-written" },
    });
    expect(scenario.steps.at(-1)).toMatchObject({
      expect: {
        intents: 0,
        transcript: { in: { "job.start": 1, "job.lookup": 1, "job.stop": 1 } },
      },
    });
  });

  it("passes on the real engine against the replayed plugin, with the same outcomes", () => {
    expect(result.failure).toBeUndefined();
    const ran = result.steps.filter((s) => s.step.startsWith("mu "));
    expect(ran.map((s) => s.signal ?? s.exit)).toEqual(recorded.map((r) => r.signal ?? r.code));
    expect(ran[3]?.stderr).toMatch(/start[.]lookup[.]found/);
    expect(result.intents).toBe(0);
  });
});

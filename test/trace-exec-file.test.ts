import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { packageRoot } from "../host/package-root.js";
import { World } from "../sim/plugin/world.js";
import { runScenario, type ScenarioResult } from "../sim/runner/execute.js";
import type { LoadedScenario, MuStep } from "../sim/runner/scenario.js";
import { muProcess } from "./helpers.js";

// A default trace (no content kept) of `host exec --file`, converted by
// scenario:from-trace: the generated file runs at once on the real engine
// with the recorded outcomes, though the script file, the world and the
// plugin's path of the recording are gone, and it names no path of the
// machine it was recorded on.

const sim = join(packageRoot(), "sim/bin/mu-plugin-sim");
const placeholder = (name: string) => `\${${name}}`;
let root: string;
let text: string;
let scenario: LoadedScenario;
let result: ScenarioResult;
const recorded: { code: number | null; stdout: string }[] = [];

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), "mu-trace-file-"));
  World.create(join(root, "world"), { preset: "link-job", instance: "sim-1" });
  const script = join(root, "deploy.sh");
  writeFileSync(script, "echo deployed-from-a-file\n");
  const env = {
    MU_STATE_DIR: join(root, "state"),
    HOME: root,
    MU_TRACE_DIR: join(root, "traces"),
  };
  for (const args of [
    ["plugin", "add", "sim", "--", sim, "--world", join(root, "world")],
    ["host", "add", "box", "--plugin", "sim"],
    ["host", "exec", "box", "--file", script],
  ])
    recorded.push(muProcess(args, env));
  const traces = readdirSync(join(root, "traces")).map((f) => join(root, "traces", f));
  const out = join(root, "from-trace.yaml");
  const conv = spawnSync(
    process.execPath,
    [join(packageRoot(), "dist/sim/trace/from-trace-main.js"), ...traces, "--out", out],
    { encoding: "utf8" },
  );
  expect(conv.status, conv.stderr).toBe(0);
  text = readFileSync(out, "utf8");
  scenario = { ...(parse(text) as LoadedScenario), file: out };
  // Only the trace can answer now: no world, no script file.
  rmSync(join(root, "world"), { recursive: true, force: true });
  rmSync(script);
  result = await runScenario(scenario, { readBack: true });
}, 120_000);

afterAll(() => rmSync(root, { recursive: true, force: true }));

describe("scenario:from-trace on host exec --file", () => {
  it("recorded a real run of the file", () => {
    expect(recorded.map((r) => r.code)).toEqual([0, 0, 0]);
    expect(recorded[2]?.stdout).toContain("deployed-from-a-file");
  });

  it("writes the step with a script file in the sandbox, and no path of this machine", () => {
    const steps = scenario.steps.filter((s): s is MuStep => "mu" in s);
    expect(steps[2]?.mu).toEqual([
      "host",
      "exec",
      "box",
      "--file",
      `${placeholder("root")}/exec-3.sh`,
    ]);
    expect(text).not.toContain(root);
    expect(text).not.toContain(packageRoot());
    expect(text).toContain(`- ${placeholder("sim")}`);
  });

  it("passes at once against the replayed plugin, with the recorded outcomes", () => {
    expect(result.failure).toBeUndefined();
    const ran = result.steps.filter((s) => s.step.startsWith("mu "));
    expect(ran.map((s) => s.exit)).toEqual([0, 0, 0]);
    // A default trace kept the output as its length and hash; that is what comes back.
    expect(ran[2]?.stdout).toMatch(/^\[len=21 sha=[0-9a-f]{12}\]/);
  });
});

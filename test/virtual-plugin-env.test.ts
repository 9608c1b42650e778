import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { findScenarioFiles, loadScenario } from "../sim/runner/load.js";
import { runVirtual } from "../sim/virtual/run-scenario.js";

// The virtual engine must hand its plugin the environment the real engine
// does: mu's own, minus mu's local-only variables. The variables of whoever
// runs the tests are not mu's, so none of them may reach the plugin's scripts.

const scenarios = findScenarioFiles(join(packageRoot(), "scenarios")).map(loadScenario);
const saved = { ...process.env };

afterEach(() => {
  for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
  Object.assign(process.env, saved);
});

describe("the virtual engine's plugin environment", () => {
  it("keeps the caller's MU_STATE_DIR and MU_SYNC_DIR from the plugin, as the real engine does", async () => {
    process.env.MU_STATE_DIR = "/tmp/not-this-run";
    process.env.MU_SYNC_DIR = "/tmp/not-this-run-either";
    const s = scenarios.find((x) => x.scenario === "plugin/env-minus-local-only");
    expect(s).toBeDefined();
    if (!s) return;
    const r = await runVirtual(s);
    expect(r.ran).toBe(true);
    if (r.ran) expect(r.failure).toBeUndefined();
  });

  it("gives the plugin's scripts no variable of the caller's that mu was not given", async () => {
    process.env.MU_TEST_CALLER_ONLY = "leaked";
    const s = scenarios.find((x) => x.scenario === "plugin/env-minus-local-only");
    if (!s) throw new Error("no such scenario");
    const probe = {
      ...s,
      steps: [
        ...s.steps.slice(0, 2),
        {
          mu: ["host", "exec", "box", "--", 'echo "caller=[$MU_TEST_CALLER_ONLY]"'],
          stdout: "^caller=\\[\\]\\n$",
        },
      ],
    } as typeof s;
    const r = await runVirtual(probe);
    expect(r.ran).toBe(true);
    if (r.ran) expect(r.failure).toBeUndefined();
  });
});

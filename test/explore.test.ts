import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { packageRoot } from "../host/package-root.js";
import { runScenario } from "../sim/runner/execute.js";
import type { LoadedScenario } from "../sim/runner/scenario.js";
import { explore, toYaml, workload } from "../sim/virtual/explore.js";
import { runVirtual } from "../sim/virtual/run-scenario.js";

// The explorer on the virtual engine: clean runs hold every invariant; a
// bug planted in mu (MU_TESTBED_PLANT) is found within the default run
// count, reported with its seed, shrunk, and written as a scenario file that
// fails in the real engine too.

const PLANT = { MU_TESTBED_PLANT: "resend-without-lookup" };

describe("the explorer", () => {
  it("holds every invariant over clean seeded runs", async () => {
    expect(await explore(1, 40)).toBeUndefined();
  }, 120_000);

  it("is a function of its seed", async () => {
    const a = await runVirtual(workload(7), { lenient: true });
    const b = await runVirtual(workload(7), { lenient: true });
    expect(a.ran && b.ran).toBe(true);
    if (a.ran && b.ran) {
      expect(b.exits).toEqual(a.exits);
      expect(b.transcript).toEqual(a.transcript);
    }
    expect(JSON.stringify(workload(8))).not.toBe(JSON.stringify(workload(7)));
  });

  it("finds the planted bug, shrinks it, and the scenario it writes fails in the real engine", async () => {
    const found = await explore(1, 500, { env: PLANT });
    expect(found, "the planted bug was not found in 500 runs").toBeDefined();
    if (!found) return;
    expect(found.broken.join("\n")).toMatch(/(host\.acquire|job\.start):\S+ was applied 2 times/);
    // Shrunk to the set-up (the plugin, maybe a host), the verb that dies and
    // the one that resends, and the agents' closes, which are always kept.
    const verbs = found.scenario.steps
      .filter((s) => "mu" in s)
      .map((s) => String((s as { mu: string }).mu))
      .filter((mu) => !/^(plugin add|host add|agent close) /.test(mu));
    expect(verbs.length, verbs.join("; ")).toBeLessThanOrEqual(2);
    const text = toYaml(found);
    const schema = JSON.parse(
      readFileSync(join(packageRoot(), "schemas/scenario.schema.json"), "utf8"),
    );
    const valid = new Ajv2020({ strict: true, allErrors: true }).compile(schema);
    const doc = parse(text) as LoadedScenario;
    expect(valid(doc), JSON.stringify(valid.errors)).toBe(true);
    const real = await runScenario({ ...doc, file: "" });
    expect(real.ok).toBe(false);
    expect(real.failure).toMatch(
      /applied (host\.acquire|job\.start):\S+ 2 times, at most 1 allowed/,
    );
    // Without the planted bug the same file holds in the real engine.
    const { MU_TESTBED_PLANT: _plant, ...env } = doc.env ?? {};
    const fixed = await runScenario({ ...doc, env, file: "" });
    expect(fixed.failure).toBeUndefined();
  }, 300_000);
});

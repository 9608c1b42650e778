import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { messageCounts } from "../sim/runner/counts.js";
import { runScenario } from "../sim/runner/execute.js";
import { findScenarioFiles, loadScenario } from "../sim/runner/load.js";
import { needsRealEngine } from "../sim/virtual/can-run.js";
import { runVirtual } from "../sim/virtual/run-scenario.js";

// The virtual engine runs the very scenario files the real one does. Each
// one it can express must pass there too, and on a sample the two engines
// must agree step by step: the same exit codes, the same messages over the
// wire, the same effects in the world, the same intents left.

const scenarios = findScenarioFiles(join(packageRoot(), "scenarios")).map(loadScenario);
const virtualOnes = scenarios.filter((s) => needsRealEngine(s) === undefined);

// How many scenario files the virtual engine runs at least.
// Raise it as the engine learns more; a change that lowers it hands a
// scenario back to the slow engine.
const VIRTUAL_FLOOR = 300;

describe("the virtual engine", () => {
  it("runs almost every scenario file, and says why it cannot run the others", () => {
    // All but those needing signals from outside, real plugin processes, mu's own files.
    expect(virtualOnes.length).toBeGreaterThanOrEqual(VIRTUAL_FLOOR);
    for (const s of scenarios) {
      const why = needsRealEngine(s);
      if (why !== undefined) expect(why.length, s.scenario).toBeGreaterThan(0);
    }
  });

  it("passes every scenario it can run", async () => {
    const failed: string[] = [];
    for (const s of virtualOnes) {
      const r = await runVirtual(s);
      if (r.ran && r.failure) failed.push(`${s.scenario}: ${r.failure}`);
    }
    expect(failed).toEqual([]);
    // The scripts a few of them run for real sleep for seconds of wall time.
  }, 600_000);

  // A sample across areas: both engines, compared outcome by outcome.
  const sample = [
    "plugin/add-list-readd-rm",
    "plugin/invalid-unknown-field",
    "host/acquire-status-release",
    "host/lookup-found-after-plugin-crash",
    "host/dedupe-inside-window",
    "host/retryable-exhausted",
    // A crash point, a plugin that SIGKILLs mu, a delayed reply, agents' panes.
    "host/sweep-acquire-request-written",
    "host/lookup-found-after-mu-sigkilled",
    "plugin/handshake-deadline",
    "agent/spawn-and-close",
    "channel/delivery-resend",
    // A recorded plugin replayed from a trace.
    "field/acquire-mu-killed-replayed",
    // Host scripts and git run for real while virtual time stands still.
    "link/exec-output-and-code",
    "agent/worktree-collect",
  ];
  it.each(sample)(
    "%s: the real and the virtual engine agree",
    async (id) => {
      const s = scenarios.find((x) => x.scenario === id);
      expect(s, id).toBeDefined();
      if (!s) return;
      const v = await runVirtual(s);
      expect(v.ran, id).toBe(true);
      if (!v.ran) return;
      const real = await runScenario(s, { readBack: true });
      expect(real.ok, real.failure).toBe(true);
      const realExits = real.steps
        .filter((st) => st.step.startsWith("mu "))
        .map((st) => st.exit ?? null);
      // The real runner also records the extra mu calls some expectations make.
      expect(realExits.slice(0, v.exits.length)).toEqual(v.exits);
      expect(messageCounts(real.transcript, "in")).toEqual(v.transcript.in);
      expect(messageCounts(real.transcript, "out")).toEqual(v.transcript.out);
      // Keys are random on the real engine and seeded on the virtual: compare per effect kind.
      const perKind = (e: Record<string, number>) =>
        Object.entries(e).reduce<Record<string, number>>((acc, [k, n]) => {
          const kind = k.split(":")[0] ?? k;
          acc[kind] = (acc[kind] ?? 0) + n;
          return acc;
        }, {});
      expect(perKind(real.effects ?? {})).toEqual(perKind(v.effects));
      expect(real.intents).toBe(v.intents);
    },
    120_000,
  );
});

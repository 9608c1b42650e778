import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { loadScenario } from "../sim/runner/load.js";
import { runVirtual } from "../sim/virtual/run-scenario.js";

// On the virtual engine, time mu spends waiting should cost one
// jump of the clock, not a wake-up every few virtual milliseconds, each of
// which is a turn of real work. Counted in jumps, not timed.

const run = async (id: string) => {
  const r = await runVirtual(loadScenario(join(packageRoot(), "scenarios", `${id}.yaml`)));
  if (!r.ran) throw new Error(`${id} does not run on the virtual engine: ${r.why}`);
  expect(r.failure).toBeUndefined();
  return r;
};

describe("waiting on the virtual engine", () => {
  it("waits out the grace of a plugin that ignores its EOF in one jump, with no poll while its leader lives", async () => {
    const r = await run("plugin/eof-ignored");
    expect(r.virtualMs).toBe(5000);
    expect(r.clockJumps).toBe(1);
  }, 60_000);

  it("watches a two-hour turn with at most one jump a second, not one every 25 ms", async () => {
    // The sim's watch used to look at the world every 25 ms whatever the
    // turn's end: 288,000 jumps for this file's two hours. The wait's own
    // liveness poll (job.status every MU_WAIT_LIVENESS_MS, 10 s) adds 720.
    const r = await run("channel/wait-an-hour");
    expect(r.virtualMs).toBeGreaterThanOrEqual(7_200_000);
    expect(r.clockJumps).toBeLessThan(7_200 + 720 + 100);
  }, 120_000);

  it("waits out a read deadline in one jump", async () => {
    // A read past its deadline, whose plugin exits as soon as it is told to
    // stop (plugin/handshake-deadline's plugin now winds down for 2 s).
    const r = await run("plugin/read-deadline");
    expect(r.virtualMs).toBe(10_000);
    expect(r.clockJumps).toBe(1);
  }, 60_000);
});

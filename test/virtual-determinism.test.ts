import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { digest, workload } from "../sim/virtual/explore.js";
import { canaryFor } from "../sim/virtual/invariants.js";
import { runVirtual } from "../sim/virtual/run-scenario.js";

// A seed is its run, byte for byte: in this process, where vitest hands the
// modules a run imports over a message to its main process, and in another
// (the built one, another pid) whose engine sleeps a random real moment
// before each jump of virtual time, as on a busy machine. Seeds 554 and 568
// cancel watches (a sim's watch once carried its real pid), 559 leaves a
// start no rule can settle; 559 and 18 hold a writer alive while another mu
// runs beside it (two runs interleaved); each also loads verbs on first use.
// 6c and 50c are the concurrent family's (a c after the seed): a release
// racing a send, and two acquires of one name, interleaved by the seeded
// scheduler at every disk operation and timer; 27c two closes of --worktree
// agents and a host fetch on one checkout, whose git runs for real between
// two of the scheduler's turns.

const run = promisify(execFile);
const SEEDS = ["541", "559", "567", "18", "6c", "50c", "27c"];

async function here(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const arg of SEEDS) {
    const seed = Number.parseInt(arg, 10);
    const families = arg.endsWith("c") ? { concurrent: true } : {};
    const s = workload(seed, { MU_PLUGIN_CANARY: canaryFor(seed) }, families);
    out[arg] = digest(await runVirtual(s, { lenient: true }));
  }
  return out;
}

describe("the virtual engine's determinism", () => {
  it("gives a seed's run byte for byte in another process, stalled at random", async () => {
    const mine = await here();
    const fixture = join(packageRoot(), "test/fixtures/seed-digest.mjs");
    const other = await run(process.execPath, [fixture, ...SEEDS], {
      env: { ...process.env, MU_TESTBED_REAL_JITTER_MS: "5" },
      timeout: 300_000,
    });
    expect(JSON.parse(other.stdout)).toEqual(mine);
    // And again here, now that every module is loaded.
    expect(await here()).toEqual(mine);
  }, 600_000);
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { realPorts } from "../../host/ports/real.js";
import { openStore } from "../../host/store/index.js";
import { runScenario } from "../../sim/runner/execute.js";
import { findScenarioFiles, loadScenario } from "../../sim/runner/load.js";
import type { LoadedScenario } from "../../sim/runner/scenario.js";
import { needsRealEngine } from "../../sim/virtual/can-run.js";
import { explore } from "../../sim/virtual/explore.js";
import { runVirtual } from "../../sim/virtual/run-scenario.js";
import { medianCommitMs } from "./commit.js";
import { median } from "./measure.js";

// The virtual engine against the real one, measured in the same run: the
// same scenario files on both, the explorer's throughput, and how a commit
// grows with the size of the database.

export interface EngineRatio {
  id: string;
  realMs: number;
  virtualMs: number;
  simulatedMs: number;
  /** The file's mu steps: each is a whole mu invocation, waiting or not. */
  muSteps: number;
  /** The virtual clock's jumps to a timer in one run. */
  jumps: number;
}

const wall = async (fn: () => Promise<unknown>) => {
  const t0 = performance.now();
  await fn();
  return performance.now() - t0;
};

type VirtualRuns = Omit<EngineRatio, "id" | "realMs">;

/**
 * `rounds` runs of one file on the virtual engine in this process: the
 * median wall time, and what a run simulated; `problem` when one did not
 * run or failed.
 */
async function virtualRuns(
  s: LoadedScenario,
  rounds: number,
): Promise<VirtualRuns & { problem?: string }> {
  let simulatedMs = 0;
  let jumps = 0;
  let problem: string | undefined;
  const times: number[] = [];
  for (let i = 0; i < rounds; i++)
    times.push(
      await wall(async () => {
        const r = await runVirtual(s);
        if (!r.ran || r.failure) problem ??= r.ran ? r.failure : r.why;
        if (r.ran) {
          simulatedMs = r.virtualMs;
          jumps = r.clockJumps;
        }
      }),
    );
  return {
    virtualMs: median(times),
    simulatedMs,
    muSteps: s.steps.filter((x) => "mu" in x).length,
    jumps,
    ...(problem === undefined ? {} : { problem }),
  };
}

export async function enginesCompared(ids: string[]): Promise<EngineRatio[]> {
  const all = findScenarioFiles(join(packageRoot(), "scenarios")).map(loadScenario);
  const out: EngineRatio[] = [];
  for (const id of ids) {
    const s = all.find((x) => x.scenario === id);
    if (!s || needsRealEngine(s)) continue;
    // A virtual run takes milliseconds: the median of five steadies it.
    const { problem: _, ...v } = await virtualRuns(s, 5);
    const realMs = await wall(() => runScenario(s));
    out.push({ id, realMs, ...v });
  }
  return out;
}

/**
 * Files that wait out hours of mu's own timers (`virtualOnly`): the virtual
 * engine alone, since the real one would take those hours. The median of
 * three runs in this process.
 */
export async function longWaits(ids: string[]): Promise<Omit<EngineRatio, "realMs">[]> {
  const all = findScenarioFiles(join(packageRoot(), "scenarios")).map(loadScenario);
  const out: Omit<EngineRatio, "realMs">[] = [];
  for (const id of ids) {
    const s = all.find((x) => x.scenario === id);
    if (!s) throw new Error(`no scenario ${id}`);
    const { problem, ...v } = await virtualRuns(s, 3);
    if (problem !== undefined) throw new Error(`${id} failed in the bench: ${problem}`);
    out.push({ id, ...v });
  }
  return out;
}

/** The whole virtual-capable suite on the virtual engine: wall time and virtual time. */
export async function virtualSuite(): Promise<{
  count: number;
  files: number;
  wallMs: number;
  simulatedMs: number;
}> {
  const all = findScenarioFiles(join(packageRoot(), "scenarios")).map(loadScenario);
  let count = 0;
  let simulatedMs = 0;
  const wallMs = await wall(async () => {
    for (const s of all) {
      const r = await runVirtual(s);
      if (!r.ran) continue;
      count++;
      simulatedMs += r.virtualMs;
    }
  });
  return { count, files: all.length, wallMs, simulatedMs };
}

/** Explorer runs a second, with its seeds in `workers` child processes (1: in this one). */
export async function explorerRate(runs: number, workers = 1): Promise<number> {
  const ms = await wall(() => explore(100_000, runs, { workers }));
  return runs / (ms / 1000);
}

/** One intent's commit (write + durable persist) with n job rows already in the database. */
export async function commitAt(n: number, receipts = 0, rounds = 5): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), "mu-bench-db-"));
  try {
    const store = openStore(realPorts({ MU_STATE_DIR: dir }));
    // write() runs this in its own transaction.
    await store.write((db) => {
      for (let i = 0; i < n; i++) {
        db.run(
          "INSERT INTO jobs (key, workstream, agent, host, plugin, instance, kind, view_kind, state, spec, created_at, updated_at) VALUES (?, 'w', ?, 'h', 'p', 'i', 'k', 'detached', 'running', '{}', 0, 0)",
          [`k${i}`, `a${i}`],
        );
      }
      // A long-lived crew's delivery history: settled receipts spread over its agents.
      for (let i = 0; i < receipts; i++) {
        db.run(
          "INSERT INTO receipts (msg_id, workstream, agent, state, created_at) VALUES (?, 'w', ?, 'delivered', ?)",
          [`m${i}`, `a${i % Math.max(n, 1)}`, i],
        );
      }
    });
    return await medianCommitMs(store, rounds);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

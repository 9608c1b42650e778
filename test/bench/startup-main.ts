import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startupReport } from "./startup.js";

// `node dist/test/bench/startup-main.js`: only bench's start-up tables, for
// the quick loop of working on start-up.
const state = mkdtempSync(join(tmpdir(), "mu-bench-"));
try {
  const runs = Number(process.env.MU_BENCH_RUNS ?? 15);
  process.stdout.write(`${await startupReport(state, runs)}\n`);
} finally {
  rmSync(state, { recursive: true, force: true });
}

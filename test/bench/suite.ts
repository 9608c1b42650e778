import { spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { childrenCpuMs } from "./measure.js";

// The whole scenario suite on the real engine, as `npm run scenarios` runs
// it (default --jobs), timed. The goal is a wall-time figure for a 2-core
// machine, so the report says the cores and the load beside it: on a busy
// machine the figure says more about the machine than about the suite.

export interface SuiteTime {
  ms: number;
  /** CPU time (user + system) of the runner and everything it started. */
  cpuMs: number;
  ok: boolean;
  cores: number;
  /** One-minute load average before and after the run. */
  load: [number, number];
  last: string;
}

export function suiteWall(): Promise<SuiteTime> {
  const reports = mkdtempSync(join(tmpdir(), "mu-bench-suite-"));
  const load0 = loadavg()[0] ?? 0;
  const cpu0 = childrenCpuMs();
  const t0 = performance.now();
  const child = spawn(
    process.execPath,
    [join(packageRoot(), "dist/sim/runner/main.js"), "--reports", reports],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout.on("data", (b: Buffer) => {
    out += b;
  });
  return new Promise((done) => {
    child.on("close", (code) => {
      rmSync(reports, { recursive: true, force: true });
      done({
        ms: performance.now() - t0,
        cpuMs: childrenCpuMs() - cpu0,
        ok: code === 0,
        cores: availableParallelism(),
        load: [load0, loadavg()[0] ?? 0],
        last: out.trim().split("\n").at(-1) ?? "",
      });
    });
  });
}

import { liveProcesses } from "../host/ports/proc-scan.js";

// No test may leave a process behind: after the whole run, any process still
// running a fixture plugin is reported, killed, and fails the run.

// Only this run's fixtures count: another test or scenario run on the same
// machine is none of our business. Workers inherit the id from setup().
const runId = `r${process.pid}`;

export function setup(): void {
  process.env.MU_TEST_RUN = runId;
}

function leftovers(): { pid: number; cmd: string }[] {
  const out: { pid: number; cmd: string }[] = [];
  for (const p of liveProcesses()) {
    const cmd = p.cmdline();
    if (p.pid !== process.pid && cmd.includes(`/mu-plugins-${runId}-`))
      out.push({ pid: p.pid, cmd });
  }
  return out;
}

export function teardown(): void {
  const left = leftovers();
  for (const p of left) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  if (left.length > 0) {
    // vitest reports a teardown error but keeps its exit code; make it count.
    process.exitCode = 1;
    throw new Error(
      `tests left processes behind:\n${left.map((p) => `  ${p.pid} ${p.cmd}`).join("\n")}`,
    );
  }
}

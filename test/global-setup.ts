import { readdirSync, readFileSync } from "node:fs";

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
  for (const name of readdirSync("/proc")) {
    const pid = Number(name);
    if (!Number.isInteger(pid) || pid === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) continue;
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").replace(/\0/g, " ").trim();
      if (cmd.includes(`/mu-plugins-${runId}-`)) out.push({ pid, cmd });
    } catch {
      // the process ended while we looked
    }
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

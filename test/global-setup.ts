import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type LiveProcess, liveProcesses } from "../host/ports/proc-scan.js";

// No test may leave a process behind: after the whole run, any process still
// running a fixture plugin, or still naming this run's temp directory (a mu,
// a plugin, a view a spawn opened in a pane of its own), is reported, killed,
// and fails the run.

// Only this run's processes count: another test or scenario run on the same
// machine is none of our business. Workers inherit both from setup().
const runId = `r${process.pid}`;
let runTmp: string | undefined;

export function setup(): void {
  process.env.MU_TEST_RUN = runId;
  // Every test's temp root lives under one directory of this run, so a
  // process that outlived its test still names it in its environment.
  runTmp = mkdtempSync(join(tmpdir(), "mu-test-"));
  process.env.TMPDIR = runTmp;
}

/** This process and its children (workers still exiting) are the run itself. */
function ownTree(all: LiveProcess[]): Set<number> {
  const own = new Set([process.pid]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const p of all)
      if (!own.has(p.pid) && own.has(p.ppid) && p.cmdline().includes("vitest")) {
        own.add(p.pid);
        grew = true;
      }
  }
  return own;
}

function leftovers(): { pid: number; cmd: string }[] {
  const all = [...liveProcesses()];
  const own = ownTree(all);
  const out: { pid: number; cmd: string }[] = [];
  for (const p of all) {
    if (own.has(p.pid)) continue;
    const cmd = p.cmdline();
    const ours =
      cmd.includes(`/mu-plugins-${runId}-`) ||
      (runTmp !== undefined && (cmd.includes(runTmp) || p.environ().includes(runTmp)));
    if (ours) out.push({ pid: p.pid, cmd });
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
  if (runTmp !== undefined) rmSync(runTmp, { recursive: true, force: true });
  if (left.length > 0) {
    // vitest reports a teardown error but keeps its exit code; make it count.
    process.exitCode = 1;
    throw new Error(
      `tests left processes behind:\n${left.map((p) => `  ${p.pid} ${p.cmd}`).join("\n")}`,
    );
  }
}

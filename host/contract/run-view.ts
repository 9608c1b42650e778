import { spawn } from "node:child_process";
import { type Stoppable, terminator } from "../plugin/terminator.js";

// A job's view run as mu's pane would run it (sh -c, stdin from /dev/null),
// in a process group of its own so that whatever it started goes with it
// once the check has seen enough. A view is mu's child, not the plugin's:
// when a signal or a crash ends mu mid-check, its group is killed with the
// plugins', or a `tail -f` would outlive the check.

export interface View {
  command: string;
  env: Record<string, string>;
  cwd?: string;
}

export interface ViewRun {
  /** What the view printed, each stream cut at a bound. */
  out: string;
  err: string;
  /** How the view's own process ended, if it did while watched (both null: it could not start, err says why). */
  ended?: { code: number | null; signal: string | null };
}

const OUT_MAX = 16_384;
const ERR_MAX = 4096;
/** After the view's exit, how long its last output may take to arrive. */
const DRAIN_MS = 100;

/**
 * Runs the view until `enough(out)` holds, it ends, or `ms` passes, then
 * kills its whole group.
 */
export function runView(
  v: View,
  ms: number,
  enough: (out: string) => boolean = () => false,
): Promise<ViewRun> {
  return new Promise((done) => {
    const r: ViewRun = { out: "", err: "" };
    const child = spawn("sh", ["-c", v.command], {
      cwd: v.cwd,
      env: { ...process.env, ...v.env },
      stdio: ["ignore", "pipe", "pipe"],
      detached: true,
    });
    let over = false;
    const kill = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        // its group is gone
      }
    };
    const member: Stoppable = { stopForSignal: async () => kill(), killNow: kill };
    terminator.add(member);
    const finish = () => {
      if (over) return;
      over = true;
      clearTimeout(timer);
      terminator.remove(member);
      kill();
      done(r);
    };
    const timer = setTimeout(finish, ms);
    child.stdout.on("data", (c: Buffer) => {
      if (r.out.length < OUT_MAX) r.out += c.toString("utf8");
      if (enough(r.out)) finish();
    });
    child.stderr.on("data", (c: Buffer) => {
      if (r.err.length < ERR_MAX) r.err += c.toString("utf8");
    });
    child.on("error", (e) => {
      r.ended ??= { code: null, signal: null };
      r.err ||= e.message;
      finish();
    });
    child.on("exit", (code, signal) => {
      r.ended = { code, signal };
      setTimeout(finish, DRAIN_MS);
    });
  });
}

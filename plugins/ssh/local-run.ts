import { spawn } from "node:child_process";

// Every local helper (ssh, git) runs as a plain child: it stays in the
// plugin's process group, so mu's stop reaches it.

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: string;
  timedOut: boolean;
  aborted: boolean;
}

export interface RunOpts {
  stdin?: Buffer | string;
  timeoutMs?: number;
  signal?: AbortSignal;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Called once the child's stdout first shows this text. */
  onStdout?: (all: Buffer) => void;
}

const live = new Set<{ kill(s: NodeJS.Signals): boolean }>();

/** Kills every helper still running: the last act before the plugin exits. */
export function killAllLocal(): void {
  for (const c of live) c.kill("SIGKILL");
}

export function runLocal(cmd: string, args: string[], o: RunOpts = {}): Promise<Ran> {
  return new Promise((resolve) => {
    const child = spawn(cmd, args, {
      stdio: ["pipe", "pipe", "pipe"],
      env: o.env ?? process.env,
      cwd: o.cwd,
    });
    live.add(child);
    const out: Buffer[] = [];
    let err = "";
    let timedOut = false;
    let aborted = false;
    const timer =
      o.timeoutMs !== undefined
        ? setTimeout(() => {
            timedOut = true;
            child.kill("SIGKILL");
          }, o.timeoutMs)
        : undefined;
    const onAbort = () => {
      aborted = true;
      child.kill("SIGKILL");
    };
    o.signal?.addEventListener("abort", onAbort, { once: true });
    if (o.signal?.aborted) onAbort();
    child.stdout.on("data", (b: Buffer) => {
      out.push(b);
      o.onStdout?.(Buffer.concat(out));
    });
    child.stderr.on("data", (b: Buffer) => {
      if (err.length < 64 * 1024) err += b.toString("utf8");
    });
    child.stdin.on("error", () => {});
    child.stdin.end(o.stdin ?? "");
    child.on("error", (e) => {
      err += `${e.message}\n`;
    });
    let done = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (done) return;
      done = true;
      live.delete(child);
      if (timer) clearTimeout(timer);
      o.signal?.removeEventListener("abort", onAbort);
      resolve({ code, signal, stdout: Buffer.concat(out), stderr: err, timedOut, aborted });
    };
    child.on("close", finish);
    // A killed ssh mux client has handed its pipes to the master, so they may
    // stay open after it exits: do not wait on them then.
    child.on("exit", (code, signal) => {
      if (!timedOut && !aborted) return;
      child.stdout.destroy();
      child.stderr.destroy();
      finish(code, signal);
    });
  });
}

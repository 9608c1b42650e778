import { type SpawnSyncReturns, spawn, spawnSync } from "node:child_process";
import { constants } from "node:os";
import { UnavailableError } from "../errors.js";
import { shQuote as q } from "../sh-quote.js";

// The git mu runs on its own side: resolving a rev in the caller's checkout,
// reading a fetch's FETCH_HEAD, and running a profile's --fetch template.
// These are quick local reads (except the template), so they run
// synchronously where that keeps the caller simple.

/** How a template ended: its exit code (null when mu's timeout killed it) and its stderr. */
export interface LocalRun {
  exitCode: number | null;
  stderr: string;
}

export interface GitRun {
  ok: boolean;
  out: string;
  err: string;
}

/** git run synchronously in `cwd`; `input`, when given, is its stdin. */
export function git(cwd: string, args: string[], input?: string): GitRun {
  return ran("git", spawnSync("git", ["-C", cwd, ...args], { encoding: "utf8", input }));
}

/** A short sh script run synchronously, its words as $1, $2, …: a few file moves beside git. */
export function sh(script: string, words: string[]): GitRun {
  return ran("/bin/sh", spawnSync("/bin/sh", ["-c", script, "sh", ...words], { encoding: "utf8" }));
}

// A program that could not be started is no answer about the checkout: said
// as git's own "not a checkout" or "no such commit", it would send the user
// looking in the wrong place. One that started and then failed on the way
// (more output than spawnSync holds) is a failed run like any other.
function ran(program: string, r: SpawnSyncReturns<string>): GitRun {
  if (r.error && r.pid > 0) return { ok: false, out: "", err: r.error.message };
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code ?? "unknown error";
    const missing = code === "ENOENT";
    throw new UnavailableError(
      "git.unrunnable",
      "git",
      missing ? `${program} was not found` : `${program} could not be started (${code})`,
      {
        hint: missing
          ? `install ${program}, or put it on mu's PATH, then run mu again`
          : "the system refused to start a process; run mu again once it has room",
      },
    );
  }
  return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr.trim() };
}

/** The top of the checkout holding `cwd`, or null outside one. */
export function checkoutOf(cwd: string): string | null {
  const r = git(cwd, ["rev-parse", "--show-toplevel"]);
  return r.ok ? r.out : null;
}

/** The full sha `rev` names as a commit in `repo`, or null. */
export function commitOf(repo: string, rev: string): string | null {
  // --verify prints the one full sha it resolved, or nothing and fails.
  const r = git(repo, ["rev-parse", "--verify", "--quiet", `${rev}^{commit}`]);
  return r.ok ? r.out : null;
}

/** Runs a --fetch template with sh in `cwd`, killing its group after timeoutMs. */
export function runTemplate(
  script: string,
  cwd: string,
  timeoutMs: number,
  env: NodeJS.ProcessEnv,
): Promise<LocalRun> {
  return new Promise((done) => {
    const child = spawn("/bin/sh", ["-c", script], {
      cwd,
      env,
      detached: true,
      // mu reads a template's exit code and stderr; its stdout says nothing mu uses.
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      try {
        process.kill(-(child.pid as number), "SIGKILL");
      } catch {
        // already gone
      }
    }, timeoutMs);
    child.on("error", (err) => {
      clearTimeout(timer);
      done({ exitCode: 127, stderr: `${stderr}${err.message}\n` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      // Killed by a signal not mu's own (a template that kills itself, the
      // OOM killer): said as a shell says it, never as mu's timeout.
      done({ exitCode: timedOut ? null : (code ?? 128 + signalNumber(signal)), stderr });
    });
  });
}

function signalNumber(signal: NodeJS.Signals | null): number {
  return signal === null ? 0 : (constants.signals[signal] ?? 0);
}

/** Fills a --fetch template's {host} and {remoteCwd}, each quoted for sh. */
export function fillTemplate(template: string, vars: { host: string; remoteCwd: string }): string {
  return template.replace(/\{(host|remoteCwd)\}/g, (_m, k: "host" | "remoteCwd") => q(vars[k]));
}

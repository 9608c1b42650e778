import { spawn, spawnSync } from "node:child_process";
import { isAbsolute, resolve } from "node:path";
import { shQuote as q } from "../sh-quote.js";

// The git mu runs on its own side: resolving a rev in the caller's checkout,
// finding and checking FETCH_HEAD, and running a profile's --fetch template.
// These are quick local reads (except the template), so they run
// synchronously where that keeps the caller simple.

export interface LocalRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  partial: boolean;
}

function git(cwd: string, args: string[]): { ok: boolean; out: string; err: string } {
  const r = spawnSync("git", ["-C", cwd, ...args], { encoding: "utf8" });
  if (r.error) return { ok: false, out: "", err: r.error.message };
  return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr.trim() };
}

/** The top of the checkout holding `cwd`, or null outside one. */
export function checkoutOf(cwd: string): string | null {
  const r = git(cwd, ["rev-parse", "--show-toplevel"]);
  return r.ok ? r.out : null;
}

/** The full sha `rev` names as a commit in `repo`, or null. */
export function commitOf(repo: string, rev: string): string | null {
  const r = git(repo, ["rev-parse", "--verify", "--quiet", `${rev}^{commit}`]);
  return r.ok && /^[0-9a-f]{40,64}$/.test(r.out) ? r.out : null;
}

/** Where this checkout keeps FETCH_HEAD (a linked worktree has its own). */
export function fetchHeadPath(repo: string): string | null {
  const r = git(repo, ["rev-parse", "--git-path", "FETCH_HEAD"]);
  if (!r.ok) return null;
  return isAbsolute(r.out) ? r.out : resolve(repo, r.out);
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
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => {
      stdout += b.toString();
    });
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
      done({ exitCode: 127, stdout, stderr: `${stderr}${err.message}\n`, partial: false });
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      done({ exitCode: timedOut ? null : code, stdout, stderr, partial: false });
    });
  });
}

/** Fills a --fetch template's {host} and {remoteCwd}, each quoted for sh. */
export function fillTemplate(template: string, vars: { host: string; remoteCwd: string }): string {
  return template.replace(/\{(host|remoteCwd)\}/g, (_m, k: "host" | "remoteCwd") => q(vars[k]));
}

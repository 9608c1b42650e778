import { spawn, spawnSync } from "node:child_process";
import { shQuote as q } from "../sh-quote.js";

// The git mu runs on its own side: resolving a rev in the caller's checkout,
// reading a fetch's FETCH_HEAD, and running a profile's --fetch template.
// These are quick local reads (except the template), so they run
// synchronously where that keeps the caller simple.

export interface LocalRun {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  partial: boolean;
}

export interface GitRun {
  ok: boolean;
  out: string;
  err: string;
}

/** git run synchronously in `cwd`; `input`, when given, is its stdin. */
export function git(cwd: string, args: string[], input?: string): GitRun {
  const r = spawnSync("git", ["-C", cwd, ...args], { encoding: "utf8", input });
  if (r.error) return { ok: false, out: "", err: r.error.message };
  return { ok: r.status === 0, out: r.stdout.trim(), err: r.stderr.trim() };
}

/** A short sh script run synchronously, its words as $1, $2, …: a few file moves beside git. */
export function sh(script: string, words: string[]): GitRun {
  const r = spawnSync("/bin/sh", ["-c", script, "sh", ...words], { encoding: "utf8" });
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

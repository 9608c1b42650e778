import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commitOf } from "../git/local.js";
import { ErrorReply } from "../plugin/call-errors.js";
import { GRACE_MS } from "../plugin/plugin-process.js";
import { shQuote as q } from "../sh-quote.js";
import { type ExecResult, exec, removeScratch, scratch, shown } from "./link-roundtrip.js";
import type { Session } from "./session.js";
import type { LinkPlace } from "./target.js";
import { CheckFailed, describeCall, type Outcome, pass } from "./verdict.js";

// timeoutMs on link.fetch and link.push, which the plugin enforces as it
// does link.exec's. The remote repository the check makes there never
// answers: its .git/HEAD is a named pipe, and git blocks opening it, so only the
// plugin's own limit ends the call. The pipe is then opened for both ends,
// which lets whatever still waits on it (a remote git the plugin could not
// reach) read an empty HEAD and give up.

const SHORT_MS = 2_000;

export async function linkGitTimeout(
  s: Session,
  place: LinkPlace,
  which: { fetch: boolean; push: boolean },
  tag: string,
): Promise<Outcome> {
  const local = mkdtempSync(join(tmpdir(), "mu-check-"));
  const git = (...args: string[]) =>
    spawnSync(
      "git",
      ["-C", local, "-c", "user.name=mu-check", "-c", "user.email=mu-check@invalid", ...args],
      { encoding: "utf8" },
    );
  try {
    git("init", "--quiet");
    git("commit", "--quiet", "--allow-empty", "--no-verify", "-m", `mu-check ${tag}`);
    const rev = commitOf(local, "HEAD");
    const dir = await scratch(s, place, tag);
    // A working tree's .git, so that a plugin that looks for one before it
    // makes a repository finds it, and any git that opens it blocks.
    const stuck = `${dir}/stuck`;
    const head = `${stuck}/.git/HEAD`;
    const made = await exec(
      s,
      place,
      `mkdir -p ${q(`${stuck}/.git/objects`)} ${q(`${stuck}/.git/refs`)} && mkfifo ${q(head)}`,
    );
    if (made.exitCode !== 0)
      throw new CheckFailed("a script that makes a named pipe with mkfifo failed", [shown(made)]);
    const unblock = () =>
      exec(s, place, `for i in 1 2 3; do exec 3<>${q(head)}; exec 3>&-; done; true`);
    const calls: [string, Record<string, unknown>][] = [];
    if (which.fetch) calls.push(["link.fetch", { remoteCwd: stuck, localRepo: local }]);
    if (which.push && rev) calls.push(["link.push", { localRepo: local, remoteRepo: stuck, rev }]);
    if (which.push && !rev)
      throw new CheckFailed(
        "the check could not make a local commit to push, so the push was not tried",
        ["git commit --allow-empty in a temporary repository failed"],
      );
    // Both at once: each is judged by its own answer, and the pipe is opened
    // only once both answered, so neither finishes early for the other's sake.
    const answers = await Promise.all(
      calls.map(async ([method, params]) => {
        const t0 = s.now();
        try {
          const r = (await s.call(
            method,
            { target: place.target, ...params, timeoutMs: SHORT_MS },
            SHORT_MS + GRACE_MS,
          )) as ExecResult;
          return { method, r, err: undefined as unknown, took: s.now() - t0 };
        } catch (err) {
          return { method, r: undefined, err, took: s.now() - t0 };
        }
      }),
    ).finally(() =>
      // Whatever the answers, a git still blocked on the pipe must not outlive the check.
      unblock().catch(() => undefined),
    );
    const said: string[] = [];
    for (const { method, r, err, took } of answers) {
      // A push may also answer an error once its limit passed; no answer at all always fails.
      const refused = err instanceof ErrorReply && method === "link.push";
      if (r ? r.exitCode !== null : !refused)
        throw new CheckFailed(
          r
            ? `${method} of a repository that never answers, under timeoutMs ${SHORT_MS}, answered exitCode ${r.exitCode} after ${took} ms, not exitCode null`
            : `${method} of a repository that never answers, under timeoutMs ${SHORT_MS}: ${describeCall(err)}`,
          [r ? shown(r) : describeCall(err)],
        );
      said.push(`${method} after ${took} ms`);
    }
    return pass(
      `${place.label}: against a repository that never answers, under timeoutMs ${SHORT_MS}, ${said.join(" and ")} answered in time`,
    );
  } finally {
    rmSync(local, { recursive: true, force: true });
    await removeScratch(s, place, tag);
  }
}

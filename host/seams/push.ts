import { UnavailableError, UsageError } from "../errors.js";
import { shQuote as q, shWord } from "../sh-quote.js";
import { failed, linkRun, type OpenLink } from "./link.js";

// link.push as mu makes it: a host's repository made to hold a commit, with
// the host's own git as the judge of whether it does.

const PUSH_RUNS = 3;

/**
 * Makes remoteRepo on the host hold `sha`. A push is not an effect, so a
 * timed-out one is simply run again; and whatever the plugin said, the
 * remote's own rev-parse must find the commit before mu relies on it.
 * `flag`, where the verb has one, is the option a timed-out push's hint names.
 */
export async function pushRev(
  l: OpenLink,
  localRepo: string,
  remoteRepo: string,
  sha: string,
  timeoutMs: number,
  flag?: string,
): Promise<void> {
  if (!l.link.push) {
    throw new UsageError(
      "host.push.none",
      "usage",
      `'${l.host.reg.name}' cannot push (its link does not declare push: true)`,
      { hint: "seed the host's repository another way, e.g. with mu host exec" },
    );
  }
  for (let run = 1; ; run++) {
    const r = await linkRun(l, "link.push", { localRepo, remoteRepo, rev: sha }, timeoutMs);
    if (r.exitCode === 0) break;
    if (r.exitCode === null && run < PUSH_RUNS) {
      l.io.err(
        `mu: host: the push to ${l.name} timed out after ${timeoutMs} ms; running it again\n`,
      );
      continue;
    }
    // Two spawns from one checkout push the same commit: the one that lost
    // git's race on the ref fails, yet the commit is there, which is all a
    // push is for.
    if (r.exitCode !== null && (await remoteHolds(l, remoteRepo, sha, timeoutMs))) return;
    throw failed(
      l,
      "push",
      r,
      timeoutMs,
      `check ${remoteRepo} on ${l.name}: mu host exec ${l.name} -- ${q(`git -C ${shWord(remoteRepo)} status`)}`,
      flag,
    );
  }
  if (!(await remoteHolds(l, remoteRepo, sha, timeoutMs))) {
    throw new UnavailableError(
      "host.push.missing",
      "host",
      `the push to ${l.name} reported success, but ${remoteRepo} there does not hold ${sha}`,
      { hint: "the plugin's link.push is broken; tell its author" },
    );
  }
}

/** Whether the host's own git finds `sha` in remoteRepo. */
async function remoteHolds(
  l: OpenLink,
  remoteRepo: string,
  sha: string,
  timeoutMs: number,
): Promise<boolean> {
  const check = await linkRun(
    l,
    "link.exec",
    {
      script: `git -C ${q(remoteRepo)} rev-parse --verify --quiet ${q(`${sha}^{commit}`)}`,
      cwd: ".",
    },
    timeoutMs,
  );
  return check.exitCode === 0 && check.stdout.trim() === sha;
}

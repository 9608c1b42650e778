import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commitOf } from "../git/local.js";
import { GRACE_MS } from "../plugin/plugin-process.js";
import type { LinkSeam } from "../protocol/declaration.js";
import { shQuote as q } from "../sh-quote.js";
import { type ExecResult, exec, removeScratch, scratch, shown } from "./link-roundtrip.js";
import type { Session } from "./session.js";
import type { LinkPlace } from "./target.js";
import { CheckFailed, describeCall, failedCall, type Outcome, pass } from "./verdict.js";

// link.push and link.fetch read back: a commit made for the check and
// nobody had before must be found by git on the host, and come back into a
// fresh local repository's FETCH_HEAD.

const GIT_MS = 60_000;

/** A throwaway local repository holding one fresh commit. */
function localCommit(nonce: string): { dir: string; rev: string } {
  const dir = mkdtempSync(join(tmpdir(), "mu-check-"));
  const git = (...args: string[]) =>
    spawnSync(
      "git",
      [
        "-C",
        dir,
        ...["-c", "user.name=mu-check", "-c", "user.email=mu-check@invalid"],
        ...["-c", "commit.gpgsign=false"],
        ...args,
      ],
      { encoding: "utf8" },
    );
  git("init", "--quiet");
  git("commit", "--quiet", "--allow-empty", "--no-verify", "-m", `mu-check ${nonce}`);
  const rev = commitOf(dir, "HEAD");
  if (rev === null) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error("git could not make a local commit for the check (is git installed?)");
  }
  return { dir, rev };
}

function freshLocalRepo(): string {
  const dir = mkdtempSync(join(tmpdir(), "mu-check-"));
  spawnSync("git", ["-C", dir, "init", "--quiet"]);
  return dir;
}

async function gitCall(
  s: Session,
  method: "link.push" | "link.fetch",
  place: LinkPlace,
  params: Record<string, unknown>,
): Promise<ExecResult> {
  try {
    return (await s.call(
      method,
      { target: place.target, ...params, timeoutMs: GIT_MS },
      GIT_MS + GRACE_MS,
    )) as ExecResult;
  } catch (err) {
    throw new CheckFailed(failedCall(method, err), [describeCall(err)]);
  }
}

/** Fetches remoteCwd into a fresh local repository; FETCH_HEAD must name `want`. */
async function fetchNames(
  s: Session,
  place: LinkPlace,
  remoteCwd: string,
  want: string,
  what: string,
): Promise<void> {
  const local = freshLocalRepo();
  try {
    const r = await gitCall(s, "link.fetch", place, { remoteCwd, localRepo: local });
    if (r.exitCode !== 0)
      throw new CheckFailed(`link.fetch of ${what} answered exitCode ${r.exitCode}`, [shown(r)]);
    const got = commitOf(local, "FETCH_HEAD");
    if (got === null)
      throw new CheckFailed(
        `link.fetch of ${what} answered exitCode 0 but left no FETCH_HEAD in the local repository`,
        [shown(r)],
      );
    if (got !== want)
      throw new CheckFailed(`after link.fetch of ${what}, FETCH_HEAD names ${got}, not ${want}`, [
        shown(r),
      ]);
  } finally {
    rmSync(local, { recursive: true, force: true });
  }
}

export async function linkPush(
  s: Session,
  place: LinkPlace,
  link: LinkSeam,
  tag: string,
  nonce: string,
): Promise<Outcome> {
  const { dir, rev } = localCommit(nonce);
  try {
    const remote = `${await scratch(s, place, tag)}/pushed`;
    const push = () => gitCall(s, "link.push", place, { localRepo: dir, remoteRepo: remote, rev });
    const r = await push();
    if (r.exitCode !== 0)
      throw new CheckFailed(
        `link.push of a fresh commit to a fresh path answered exitCode ${r.exitCode}`,
        [shown(r)],
      );
    const held = await exec(
      s,
      place,
      `git -C ${q(remote)} rev-parse --verify --quiet ${q(`${rev}^{commit}`)}`,
    );
    if (held.stdout.trim() !== rev)
      throw new CheckFailed(
        `link.push answered exitCode 0, yet the remote repository does not hold ${rev}`,
        [shown(held)],
      );
    const second = await push();
    if (second.exitCode !== 0)
      throw new CheckFailed(
        `a second link.push of a commit the remote already holds answered exitCode ${second.exitCode}`,
        [shown(second)],
      );
    if (!link.fetch)
      return pass(
        `${place.label}: the remote holds the pushed commit and a second push succeeded; not fetched back (fetch: false)`,
      );
    // Push promises the commit, not the remote's HEAD: point HEAD at it to fetch it back.
    const point = await exec(s, place, `git -C ${q(remote)} update-ref --no-deref HEAD ${rev}`);
    if (point.exitCode !== 0)
      throw new CheckFailed("git could not point the pushed repository's HEAD at the commit", [
        shown(point),
      ]);
    await fetchNames(s, place, remote, rev, "the pushed repository");
    return pass(
      `${place.label}: the remote holds the pushed commit, a second push succeeded, and a fetch brought it back`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await removeScratch(s, place, tag);
  }
}

export async function linkFetch(
  s: Session,
  place: LinkPlace,
  tag: string,
  nonce: string,
): Promise<Outcome> {
  try {
    let remote: string;
    let what: string;
    if (place.root !== undefined) {
      remote = place.root;
      what = `the profile's repository ${place.root}`;
    } else {
      remote = `${await scratch(s, place, tag)}/fetched`;
      what = "a fresh repository";
      const made = await exec(
        s,
        place,
        [
          `git init --quiet ${q(remote)} && cd ${q(remote)} || exit 1`,
          `git -c user.name=mu-check -c user.email=mu-check@invalid -c commit.gpgsign=false commit --quiet --allow-empty --no-verify -m 'mu-check ${nonce}' || exit 1`,
        ].join("\n"),
      );
      if (made.exitCode !== 0)
        throw new CheckFailed("git could not make a repository on the host to fetch from", [
          shown(made),
        ]);
    }
    const head = await exec(s, place, `git -C ${q(remote)} rev-parse --verify --quiet HEAD`);
    const want = head.stdout.trim();
    if (head.exitCode !== 0 || !/^[0-9a-f]{40,64}$/.test(want))
      throw new CheckFailed(
        place.root !== undefined
          ? `the HEAD of ${what} on the host could not be read; if it does not exist yet, run mu host push ${place.target.host.name} first`
          : `the HEAD of ${what} on the host could not be read`,
        [shown(head)],
      );
    await fetchNames(s, place, remote, want, what);
    return pass(`${place.label}: FETCH_HEAD names the HEAD of ${what}`);
  } finally {
    await removeScratch(s, place, tag);
  }
}

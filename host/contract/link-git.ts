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

/** A throwaway local repository holding one fresh commit, or `into`'s with one more on top. */
function localCommit(nonce: string, into?: string): { dir: string; rev: string } {
  const dir = into ?? mkdtempSync(join(tmpdir(), "mu-check-"));
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
  if (!into) git("init", "--quiet");
  git("commit", "--quiet", "--allow-empty", "--no-verify", "-m", `mu-check ${nonce}`);
  let rev: string | null = null;
  try {
    rev = commitOf(dir, "HEAD");
  } finally {
    // A directory of the check's own goes with a failure, even one of git not starting.
    if (rev === null && !into) rmSync(dir, { recursive: true, force: true });
  }
  if (rev === null)
    throw new Error("git could not make a local commit for the check (is git installed?)");
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
    // A push that only creates the remote, or answers 0 for one that exists, fails here.
    const next = localCommit(`${nonce} again`, dir).rev;
    const third = await gitCall(s, "link.push", place, {
      localRepo: dir,
      remoteRepo: remote,
      rev: next,
    });
    const heldNext = await exec(
      s,
      place,
      `git -C ${q(remote)} rev-parse --verify --quiet ${q(`${next}^{commit}`)}`,
    );
    if (third.exitCode !== 0 || heldNext.stdout.trim() !== next)
      throw new CheckFailed(
        third.exitCode === 0
          ? `link.push of a second, newer commit to the existing repository answered exitCode 0, yet the remote does not hold ${next}`
          : `link.push of a second, newer commit to the existing repository answered exitCode ${third.exitCode}`,
        [shown(third), shown(heldNext)],
      );
    if (!link.fetch)
      return pass(
        `${place.label}: the remote holds the pushed commit, a second push succeeded, and a newer commit pushed to it arrived; not fetched back (fetch: false)`,
      );
    // Push promises the commit, not the remote's HEAD: point HEAD at it to fetch it back.
    const point = await exec(s, place, `git -C ${q(remote)} update-ref --no-deref HEAD ${next}`);
    if (point.exitCode !== 0)
      throw new CheckFailed("git could not point the pushed repository's HEAD at the commit", [
        shown(point),
      ]);
    await fetchNames(s, place, remote, next, "the pushed repository");
    return pass(
      `${place.label}: the remote holds the pushed commit, a second push succeeded, a newer commit pushed to it arrived, and a fetch brought it back`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
    await removeScratch(s, place, tag);
  }
}

/** A repository made on the host with one commit, in the check's scratch directory. */
async function freshRemote(s: Session, place: LinkPlace, tag: string, nonce: string) {
  const remote = `${await scratch(s, place, tag)}/fetched`;
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
  return remote;
}

/** Fetches `remote` as it is; its HEAD must come back. */
async function fetchHead(s: Session, place: LinkPlace, remote: string, what: string, hint = "") {
  const head = await exec(s, place, `git -C ${q(remote)} rev-parse --verify --quiet HEAD`);
  const want = head.stdout.trim();
  if (head.exitCode !== 0 || !/^[0-9a-f]{40,64}$/.test(want))
    throw new CheckFailed(`the HEAD of ${what} on the host could not be read${hint}`, [
      shown(head),
    ]);
  await fetchNames(s, place, remote, want, what);
}

/**
 * Again after a new commit (a cache that serves the first HEAD fails), then
 * with HEAD on a new branch that is not the first one (a fetch of a branch
 * by name fails).
 */
async function fetchMovingHead(s: Session, place: LinkPlace, remote: string, nonce: string) {
  const commit = (msg: string) =>
    `git -c user.name=mu-check -c user.email=mu-check@invalid -c commit.gpgsign=false commit --quiet --allow-empty --no-verify -m ${q(`mu-check ${nonce} ${msg}`)} || exit 1`;
  for (const [step, what] of [
    [commit("again"), "the same repository after a new commit"],
    [
      `git checkout --quiet -b mu-check-other || exit 1\n${commit("branch")}`,
      "the same repository with HEAD on another branch",
    ],
  ] as const) {
    const moved = await exec(s, place, `cd ${q(remote)} || exit 1\n${step}`);
    if (moved.exitCode !== 0)
      throw new CheckFailed("git could not make a new commit on the host to fetch", [shown(moved)]);
    await fetchHead(s, place, remote, what);
  }
}

export async function linkFetch(
  s: Session,
  place: LinkPlace,
  tag: string,
  nonce: string,
): Promise<Outcome> {
  try {
    let profile = "";
    if (place.root !== undefined) {
      // The profile's repository is read, never written: the moving HEAD is the scratch one's.
      const what = `the profile's repository ${place.root}`;
      await fetchHead(
        s,
        place,
        place.root,
        what,
        `; if it does not exist yet, run mu host push ${place.target.host.name} first`,
      );
      profile = ` of ${what}, and`;
    }
    const remote = await freshRemote(s, place, tag, nonce);
    await fetchHead(s, place, remote, "a fresh repository");
    await fetchMovingHead(s, place, remote, nonce);
    return pass(
      `${place.label}: FETCH_HEAD names the HEAD${profile} of a fresh repository, again after a new commit, and with HEAD on another branch`,
    );
  } finally {
    await removeScratch(s, place, tag);
  }
}

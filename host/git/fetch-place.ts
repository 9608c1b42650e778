import { rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { firstLine, UnavailableError } from "../errors.js";
import { commitOf, git, sh } from "./local.js";

// A link fetch leaves its answer in the FETCH_HEAD of the repository mu
// names. A checkout's own FETCH_HEAD is one file that every git fetch and
// every mu in that checkout writes, so mu never names the checkout: it names
// a fetch place of its own, a bare repository made for this one fetch that
// borrows the checkout's objects (alternates), so only what is new travels.
// The tip read from the place's FETCH_HEAD is brought into the checkout by
// a fetch that writes no FETCH_HEAD, pinned under refs/mu/, and the place
// is removed. Nothing is registered in the checkout (a linked worktree
// would be: git commands that list worktrees die on one half made).

/** Where the places live: inside the git directory, out of the user's tree. */
const PLACES = ["mu", "fetch"];

/** Keeps a git run in the user's checkout to the one thing asked of it. */
const QUIET = [
  "-c",
  "gc.auto=0",
  "-c",
  "maintenance.auto=false",
  "-c",
  "fetch.recurseSubmodules=false",
];

/** git's error, one line, with its cause as the hint: a held lock, or git's own refusal. */
export function localGitFailed(
  code: string,
  what: string,
  repo: string,
  err: string,
): UnavailableError {
  const said = firstLine(err.trim()) || "no message";
  const locked = /\.lock'?: File exists/i.test(err);
  return new UnavailableError(code, "git", `${what} in ${repo} failed: git said: ${said}`, {
    hint: locked
      ? `another git process in ${repo} holds the lock git names; run it again once that process is done`
      : `that is git's own error in ${repo}, not the host's: fix what git names, then run it again`,
  });
}

/** Makes a fetch place for `repo` named `id` (unique per fetch) and returns its path. */
export function openFetchPlace(repo: string, id: string): string {
  const dirs = git(repo, ["rev-parse", "--git-common-dir", "--git-path", "objects"]);
  const [common, objects] = dirs.out.split("\n");
  if (!dirs.ok || !common || !objects)
    throw localGitFailed("host.fetch.place", "finding the git directory", repo, dirs.err);
  const path = join(resolve(repo, common), ...PLACES, id);
  // mkdir without -p: a place is never shared, even if two ids collided; a
  // half-made place is removed, never one another mu made. The place runs no
  // gc of its own: its borrowed objects are the checkout's.
  const r = sh(
    [
      'mkdir -p "$(dirname "$1")" && mkdir "$1" || exit 1',
      '{ git init --bare --quiet --template= "$1" &&',
      '  git -C "$1" config gc.auto 0 && git -C "$1" config maintenance.auto false &&',
      '  mkdir -p "$1/objects/info" && printf \'%s\\n\' "$2" > "$1/objects/info/alternates"; } ||',
      '  { rm -rf "$1"; exit 1; }',
    ].join("\n"),
    [path, resolve(repo, objects)],
  );
  if (!r.ok) throw localGitFailed("host.fetch.place", "making a fetch place", repo, r.err);
  return path;
}

/**
 * Removes a place; it holds nothing the checkout needs once its tip is pinned.
 * Best effort: it runs in a finally, where a failure of its own would hide
 * the fetch's outcome.
 */
export function closeFetchPlace(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {
    // A place left behind holds borrowed objects only; git never reads it.
  }
}

/** The commit a fetch left in its place's own FETCH_HEAD, or null. */
export function fetchedTip(place: string): string | null {
  return commitOf(place, "FETCH_HEAD");
}

/** Brings `sha` from the place into the checkout's store, writing no FETCH_HEAD and no ref. */
export function bringIn(repo: string, place: string, sha: string): void {
  const mark = git(place, ["update-ref", "refs/mu/tip", sha]);
  if (!mark.ok)
    throw localGitFailed("host.fetch.place", "marking the fetched commit", place, mark.err);
  const r = git(repo, [
    ...QUIET,
    "fetch",
    "--quiet",
    "--no-tags",
    "--no-write-fetch-head",
    place,
    "refs/mu/tip",
  ]);
  if (!r.ok)
    throw localGitFailed("host.fetch.bring", "bringing the fetched commit in", repo, r.err);
}

/**
 * Points `ref` in `repo` at `sha`, durably (the ref file is synced), with a
 * reflog line saying where it came from. git updates it under its own lock
 * and refuses a sha whose objects the store does not hold, so success proves
 * the fetched work is in the checkout and named.
 */
export function pinRef(repo: string, ref: string, sha: string, why: string): void {
  const r = git(repo, [
    "-c",
    "core.fsync=committed,reference",
    "-c",
    "core.filesRefLockTimeout=5000",
    "update-ref",
    "--create-reflog",
    "-m",
    why,
    ref,
    sha,
  ]);
  if (!r.ok) throw localGitFailed("host.fetch.ref", `pointing ${ref} at ${sha}`, repo, r.err);
}

/** Drops `ref` when `sha` already contains its commit, and only if it still names that commit. */
export function dropIfContained(repo: string, ref: string, sha: string): void {
  // A tidy-up after the collect is recorded: a git that cannot start now
  // leaves the ref, which holds nothing the final ref does not, and must
  // not turn a finished close into a failed one.
  try {
    const old = commitOf(repo, ref);
    if (old === null) return;
    if (!git(repo, ["merge-base", "--is-ancestor", old, sha]).ok) return;
    git(repo, ["update-ref", "-d", ref, old]);
  } catch {
    return;
  }
}

/**
 * A name as one component of a ref. mu's names allow what git's refs do not
 * (two dots in a row, a trailing `.lock` or dot); those few are spelled with
 * `_` so the ref stays valid and still reads as the name.
 */
export function refPart(name: string): string {
  return name
    .replace(/\.(?=\.)/g, "._")
    .replace(/\.lock$/, "._lock")
    .replace(/\.$/, "._");
}

/** Where a close keeps an agent's collected work: one ref per job, so no two closes share it. */
export function collectedRef(ws: string, agent: string, jobKey: string): string {
  return `refs/mu/collected/${refPart(ws)}/${refPart(agent)}/${jobKey}`;
}

/** Where in-life collects keep a running agent's work, apart from its close's ref. */
export function inLifeRef(ws: string, agent: string, jobKey: string): string {
  return `refs/mu/in-life/${refPart(ws)}/${refPart(agent)}/${jobKey}`;
}

/** Where `mu host fetch` leaves the newest tip it fetched from a host. */
export function fetchedRef(host: string): string {
  return `refs/mu/fetched/${refPart(host)}`;
}

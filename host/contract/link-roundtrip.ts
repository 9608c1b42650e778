import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { commitOf } from "../git/local.js";
import { canonical } from "../plugin/load-rules.js";
import { GRACE_MS } from "../plugin/plugin-process.js";
import type { LinkSeam } from "../protocol/declaration.js";
import { shQuote as q } from "../sh-quote.js";
import type { Session } from "./session.js";
import { CHECK_HOST, type LinkPlace } from "./target.js";
import { CheckFailed, describeCall, failedCall, type Outcome, pass } from "./verdict.js";
import { clip } from "./wire.js";

// The link's results read back, so that only a plugin that really ran the
// script, the push or the fetch can pass: values computed from fresh random
// numbers, a file left for the next script, a commit nobody had before.

const EXEC_MS = 20_000;
const GIT_MS = 60_000;
/** A script's own exit code, one no shell or transport would make up. */
const EXIT = 37;

export interface ExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  partial: boolean;
}

const shown = (r: ExecResult) => clip(canonical(r));

export async function exec(
  s: Session,
  place: LinkPlace,
  script: string,
  timeoutMs = EXEC_MS,
): Promise<ExecResult> {
  try {
    return (await s.call(
      "link.exec",
      { target: place.target, script, cwd: ".", timeoutMs },
      timeoutMs + GRACE_MS,
    )) as ExecResult;
  } catch (err) {
    const evidence = [describeCall(err)];
    if (place.target.host.name === CHECK_HOST && !place.target.host.handle)
      evidence.push(
        `the suite named the host '${CHECK_HOST}': a link that reaches only hosts it knows needs --host <profile>`,
      );
    throw new CheckFailed(failedCall("link.exec", err), evidence);
  }
}

/** The check's own directory in the login directory, named by its tag. */
export const scratchDir = (tag: string) => `.mu-check-${tag}`;

/** Makes the scratch directory and answers its absolute path, so git calls need no relative paths. */
async function scratch(s: Session, place: LinkPlace, tag: string): Promise<string> {
  const r = await exec(s, place, `mkdir -p ${scratchDir(tag)} && cd ${scratchDir(tag)} && pwd -P`);
  const dir = r.stdout.trim();
  if (r.exitCode !== 0 || !dir.startsWith("/"))
    throw new CheckFailed("a script that makes and names a directory in '.' failed", [shown(r)]);
  return dir;
}

/** Best effort: a check that failed may have left its plugin unable to answer. */
export async function removeScratch(s: Session, place: LinkPlace, tag: string): Promise<void> {
  await exec(s, place, `rm -rf ${scratchDir(tag)}`).catch(() => {});
}

export interface ExecProof {
  outcome: Outcome;
  /** How long a trivial script took there and back: the timeout check scales with it. */
  roundTripMs: number;
}

export async function linkExec(
  s: Session,
  place: LinkPlace,
  tag: string,
  hex: (bytes: number) => string,
): Promise<ExecProof> {
  // 15 bits each, so a * b + c fits even a shell with 32-bit arithmetic.
  const [a, b, c] = [hex(2), hex(2), hex(2)].map((h) => Number.parseInt(h, 16) & 0x7fff) as [
    number,
    number,
    number,
  ];
  const nonce = hex(16);
  const dir = scratchDir(tag);
  const out = `mu-check ${a * b + c}\n`;
  const err = `mu-check ${a - b}`;
  const first = [
    `mkdir -p ${dir} && printf '%s\\n' ${nonce} > ${dir}/nonce || exit 1`,
    `echo "mu-check $((${a} * ${b} + ${c}))"`,
    `echo "mu-check $((${a} - ${b}))" >&2`,
    `exit ${EXIT}`,
  ].join("\n");
  try {
    const r = await exec(s, place, first);
    if (r.exitCode !== EXIT)
      throw new CheckFailed(
        `a script that exits ${EXIT} came back with exitCode ${r.exitCode}${r.exitCode === 0 && r.stdout === "" ? " and no output: did it run at all?" : ""}`,
        [shown(r)],
      );
    if (r.stdout !== out)
      throw new CheckFailed(
        `stdout came back as ${JSON.stringify(clip(r.stdout))}, not the ${JSON.stringify(out)} the script printed`,
        [shown(r)],
      );
    if (!r.stderr.split("\n").includes(err))
      throw new CheckFailed(`stderr came back without the line ${JSON.stringify(err)}`, [shown(r)]);
    if (r.partial) throw new CheckFailed("a few bytes of output came back partial", [shown(r)]);

    const t0 = s.now();
    const again = await exec(s, place, `cat ${dir}/nonce`);
    const roundTripMs = s.now() - t0;
    if (again.exitCode !== 0 || again.stdout !== `${nonce}\n`)
      throw new CheckFailed(
        `a file one script wrote in cwd '.' was not there for the next script in cwd '.'`,
        [shown(again)],
      );
    return {
      outcome: pass(
        `${place.label}: stdout, stderr and exit code ${EXIT} came back exactly, and cwd '.' is the same directory from one script to the next (${roundTripMs} ms there and back)`,
      ),
      roundTripMs,
    };
  } finally {
    await removeScratch(s, place, tag);
  }
}

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

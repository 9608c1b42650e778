import { canonical } from "../plugin/load-rules.js";
import { GRACE_MS } from "../plugin/plugin-process.js";
import type { Session } from "./session.js";
import { CHECK_HOST, type LinkPlace } from "./target.js";
import { CheckFailed, describeCall, failedCall, type Outcome, pass } from "./verdict.js";
import { clip } from "./wire.js";

// The link's results read back (link.exec here, push and fetch in
// link-git.ts), so that only a plugin that really ran the script, the push
// or the fetch can pass: values computed from fresh random numbers, a file
// left for the next script, a commit nobody had before.

const EXEC_MS = 20_000;
/** A script's own exit code, one no shell or transport would make up. */
const EXIT = 37;

export interface ExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  partial: boolean;
}

export const shown = (r: ExecResult) => clip(canonical(r));

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
export async function scratch(s: Session, place: LinkPlace, tag: string): Promise<string> {
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

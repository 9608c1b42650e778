import { GRACE_MS } from "../plugin/plugin-process.js";
import {
  type ExecResult,
  exec,
  removeScratch,
  scratch,
  scratchDir,
  shown,
} from "./link-roundtrip.js";
import type { Session } from "./session.js";
import type { LinkPlace } from "./target.js";
import { CheckFailed, describeCall, failedCall, type Outcome, pass } from "./verdict.js";

// link.exec's cwd: a directory the check made, named relative to the login
// directory and by its absolute path. A plugin that runs every script in
// the login directory passes every check that only ever sends '.'.

const CWD_MS = 20_000;

/** link.exec in `cwd`; a failed call fails the check, naming the cwd. */
export async function execIn(
  s: Session,
  place: LinkPlace,
  script: string,
  cwd: string,
  timeoutMs = CWD_MS,
): Promise<ExecResult> {
  try {
    return (await s.call(
      "link.exec",
      { target: place.target, script, cwd, timeoutMs },
      timeoutMs + GRACE_MS,
    )) as ExecResult;
  } catch (err) {
    const where = cwd === "." ? "" : `in cwd '${cwd}': `;
    throw new CheckFailed(`${where}${failedCall("link.exec", err)}`, [describeCall(err)]);
  }
}

export async function linkCwd(s: Session, place: LinkPlace, tag: string): Promise<Outcome> {
  try {
    const dir = await scratch(s, place, tag);
    const made = await exec(s, place, `mkdir -p ${scratchDir(tag)}/rel ${scratchDir(tag)}/abs`);
    if (made.exitCode !== 0)
      throw new CheckFailed("a script that makes two directories in '.' failed", [shown(made)]);
    const cases = [
      { cwd: `${scratchDir(tag)}/rel`, want: `${dir}/rel`, how: "relative" },
      { cwd: `${dir}/abs`, want: `${dir}/abs`, how: "absolute" },
    ];
    for (const c of cases) {
      const r = await execIn(s, place, "pwd -P", c.cwd);
      const got = r.stdout.trim();
      if (r.exitCode !== 0 || got !== c.want)
        throw new CheckFailed(
          r.exitCode === 0
            ? `a script sent with the ${c.how} cwd '${c.cwd}' ran in '${got}', not in '${c.want}'`
            : `a script sent with the ${c.how} cwd '${c.cwd}' (a directory that exists) answered exitCode ${r.exitCode}`,
          [shown(r)],
        );
    }
    return pass(
      `${place.label}: a script ran in the directory its cwd named, relative to the login directory and absolute`,
    );
  } finally {
    await removeScratch(s, place, tag);
  }
}

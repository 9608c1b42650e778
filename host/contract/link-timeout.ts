import { canonical } from "../plugin/load-rules.js";
import { GRACE_MS } from "../plugin/plugin-process.js";
import type { LinkSeam } from "../protocol/declaration.js";
import type { ExecResult } from "./link-roundtrip.js";
import type { Session } from "./session.js";
import type { LinkPlace } from "./target.js";
import { CheckFailed, describeCall, failedCall, type Outcome, pass } from "./verdict.js";

// link.exec of a script that outlives its timeoutMs. The plugin, not mu,
// enforces the limit: it must answer exitCode null in time. What it declared
// about the remote side after a timeout is then put to the test with marker
// files: one the script writes at once, and late ones written only by what
// the script started (a background job, a pipeline member), as a real
// script's work would be. Killing only the script's shell leaves those.

const MIN_TIMEOUT_MS = 1_500;
const MAX_TIMEOUT_MS = 15_000;
/**
 * How long after the answer the late markers come: a plugin (or a loaded
 * machine) slow to kill the script must not look like one that left it
 * running. "stopping" may run on for the grace after its answer, so later.
 */
const AFTER_ANSWER_S = { stopped: 4.5, stopping: 10.5, unknown: 4.5 } as const;
/** Past the moment a script left running would have written its late markers. */
const MARGIN_MS = 1_000;
const PROBE_MS = 10_000;

/** A slow link gets a longer limit, so the script is sure to have begun before it. */
export function timeoutFor(roundTripMs: number): number {
  return Math.min(MAX_TIMEOUT_MS, Math.max(MIN_TIMEOUT_MS, 3 * roundTripMs + 1_000));
}

export async function linkTimeout(
  s: Session,
  link: LinkSeam,
  place: LinkPlace,
  tag: string,
  timeoutMs: number,
): Promise<Outcome> {
  const start = `.${tag}.start`;
  const lateBg = `.${tag}.late-background`;
  const latePipe = `.${tag}.late-pipeline`;
  const lateS = Math.ceil(timeoutMs / 1000 + AFTER_ANSWER_S[link.remoteOnTimeout]);
  const script = [
    `: > ${start}`,
    `( sleep ${lateS}; : > ${lateBg} ) &`,
    `sleep ${lateS} | ( sleep ${lateS}; : > ${latePipe} )`,
    "wait",
  ].join("\n");
  const exec = (script: string, timeoutMs: number) =>
    s.call(
      "link.exec",
      { target: place.target, script, cwd: ".", timeoutMs },
      timeoutMs + GRACE_MS,
    );

  const t0 = s.now();
  let r: ExecResult;
  try {
    r = (await exec(script, timeoutMs)) as ExecResult;
  } catch (err) {
    throw new CheckFailed(
      `a script that outlives timeoutMs ${timeoutMs}: ${failedCall("link.exec", err)}`,
      [describeCall(err)],
    );
  }
  const took = s.now() - t0;

  // Whatever happened, the markers must not outlive the check: wait until the
  // script would be done, then look and clean up in one probe. The script
  // began before the answer, so counting from the answer is a safe bound.
  await s.sleep(lateS * 1000 + MARGIN_MS);
  let seen: string;
  try {
    const p = (await exec(
      [
        `test -e ${start} && echo MU-CHECK:started`,
        `test -e ${lateBg} && echo MU-CHECK:late-background`,
        `test -e ${latePipe} && echo MU-CHECK:late-pipeline`,
        `rm -f ${start} ${lateBg} ${latePipe}; true`,
      ].join("\n"),
      PROBE_MS,
    )) as ExecResult;
    seen = p.stdout;
  } catch (err) {
    throw new CheckFailed(`the link.exec that looks for the markers failed: ${describeCall(err)}`, [
      describeCall(err),
    ]);
  }

  if (r.exitCode !== null) {
    throw new CheckFailed(
      `a script past timeoutMs ${timeoutMs} was answered with exitCode ${r.exitCode} after ${took} ms, not exitCode null`,
      [canonical(r)],
    );
  }
  const answered = `${place.label}: answered exitCode null after ${took} ms (timeoutMs ${timeoutMs})`;
  if (!seen.includes("MU-CHECK:started")) {
    throw new CheckFailed(`${answered}, but the script never began`, [
      `it would have written ${start} in the login directory at once; the next script found none`,
    ]);
  }
  if (link.remoteOnTimeout === "unknown")
    return pass(`${answered}; remoteOnTimeout unknown promises nothing after that`);
  const ranOn = [
    seen.includes("MU-CHECK:late-background") ? "a background job" : "",
    seen.includes("MU-CHECK:late-pipeline") ? "a pipeline member" : "",
  ].filter((x) => x !== "");
  if (ranOn.length > 0) {
    throw new CheckFailed(
      `remoteOnTimeout is '${link.remoteOnTimeout}', yet ${ranOn.join(" and ")} the script started went on running after the answer${link.remoteOnTimeout === "stopping" ? ` and its ${GRACE_MS} ms grace` : ""}`,
      [`each wrote its marker in the login directory ${lateS} s after the script began`],
    );
  }
  return pass(
    `${answered}; neither its background job nor its pipeline ran on (${link.remoteOnTimeout})`,
  );
}

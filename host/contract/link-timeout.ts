import { canonical } from "../plugin/load-rules.js";
import { GRACE_MS } from "../plugin/plugin-process.js";
import type { LinkSeam } from "../protocol/declaration.js";
import type { Session } from "./session.js";
import type { Target } from "./target.js";
import { CheckFailed, describeCall, type Outcome, pass } from "./verdict.js";

// link.exec of a script that outlives its timeoutMs. The plugin, not mu,
// enforces the limit: it must answer exitCode null in time. What it declared
// about the remote side after a timeout is then put to the test with marker
// files the script writes: one at once, one only if it was left running.

const TIMEOUT_MS = 1_500;
/**
 * When the script writes its late marker, well after the answer is due: a
 * plugin (or a loaded machine) slow to kill the script must not look like
 * one that left it running. "stopping" may run on for the grace after its
 * answer, so its marker comes later still.
 */
const LATE_S = { stopped: 6, stopping: 12, unknown: 6 } as const;
/** Past the moment a script left running would have written its late marker. */
const MARGIN_MS = 1_000;
const PROBE_MS = 10_000;

interface ExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  partial: boolean;
}

export async function linkTimeout(
  s: Session,
  link: LinkSeam,
  target: Target,
  tag: string,
): Promise<Outcome> {
  const start = `.${tag}.start`;
  const late = `.${tag}.late`;
  const lateS = LATE_S[link.remoteOnTimeout];
  const script = `: > ${start}; sleep ${lateS}; : > ${late}`;
  const exec = (script: string, timeoutMs: number) =>
    s.call("link.exec", { target, script, cwd: ".", timeoutMs }, timeoutMs + GRACE_MS);

  const t0 = s.now();
  let r: ExecResult;
  try {
    r = (await exec(script, TIMEOUT_MS)) as ExecResult;
  } catch (err) {
    throw new CheckFailed(
      `link.exec with timeoutMs ${TIMEOUT_MS} was not answered within ${TIMEOUT_MS + GRACE_MS} ms`,
      [describeCall(err)],
    );
  }
  const answeredAt = s.now();
  const took = answeredAt - t0;

  // Whatever happened, the markers must not outlive the check: wait until the
  // script would be done, then look and clean up in one probe. The script
  // began before the answer, so counting from the answer is a safe bound.
  await s.sleep(lateS * 1000 + MARGIN_MS);
  let seen: string;
  try {
    const p = (await exec(
      `test -e ${start} && echo MU-CHECK:started; test -e ${late} && echo MU-CHECK:late; rm -f ${start} ${late}; true`,
      PROBE_MS,
    )) as ExecResult;
    seen = p.stdout;
  } catch (err) {
    throw new CheckFailed("the link.exec that looks for the markers failed", [describeCall(err)]);
  }

  if (r.exitCode !== null) {
    throw new CheckFailed(
      `a script past timeoutMs ${TIMEOUT_MS} was answered with exitCode ${r.exitCode} after ${took} ms, not exitCode null`,
      [canonical(r)],
    );
  }
  const started = seen.includes("MU-CHECK:started");
  const ranOn = seen.includes("MU-CHECK:late");
  const answered = `answered exitCode null after ${took} ms (timeoutMs ${TIMEOUT_MS})`;
  if (link.remoteOnTimeout === "unknown")
    return pass(`${answered}; remoteOnTimeout unknown promises nothing after that`);
  if (ranOn) {
    throw new CheckFailed(
      `remoteOnTimeout is '${link.remoteOnTimeout}', yet the script went on running after the answer${link.remoteOnTimeout === "stopping" ? ` and its ${GRACE_MS} ms grace` : ""}`,
      [`it wrote ${late} in the login directory ${lateS} s after it began`],
    );
  }
  return pass(
    `${answered}; nothing of it ran on (${link.remoteOnTimeout})${started ? "" : ", though the script never began, so that proves little"}`,
  );
}

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
// files the script's descendants rewrite every second: a background job, a
// pipeline member, one in a session of its own and one with a cleared
// environment, as a real script's work would be. For "stopped" they are
// removed the moment the answer comes and must not come back; for
// "stopping", the same after the grace. Killing only the script's shell, or
// killing the tree some time after answering, leaves them writing.
// Where writers may live on (a plugin that failed, or one that promised
// nothing), the check stops them itself before it answers: each writer ends
// once a stop file exists and removes its marker as it goes, so the run
// leaves no process and no file behind on the remote.

const MIN_TIMEOUT_MS = 1_500;
const MAX_TIMEOUT_MS = 15_000;
/** Longer than the writers' one-second beat, so a writer still alive is seen. */
const WATCH_MS = 1_600;
/** How long the stop file stays: two beats, so every writer alive has looked for it. */
const STOP_S = 2;
const PROBE_MS = 10_000;
/** The writers, each by what it stands for and the file it rewrites. */
const WRITERS = [
  ["background", "a background job"],
  ["pipeline", "a pipeline member"],
  ["session", "a process in a session of its own"],
  ["blank", "a process with a cleared environment"],
] as const;

/** A slow link gets a longer limit, so the script is sure to have begun before it. */
export function timeoutFor(roundTripMs: number): number {
  return Math.min(MAX_TIMEOUT_MS, Math.max(MIN_TIMEOUT_MS, 3 * roundTripMs + 1_000));
}

/** The entry the check's own script gives the session it makes: the containment scan spares it. */
export const ownSession = (tag: string) => `MU_CHECK_OWN_SESSION=${tag}`;

export async function linkTimeout(
  s: Session,
  link: LinkSeam,
  place: LinkPlace,
  tag: string,
  timeoutMs: number,
): Promise<Outcome> {
  const start = `.${tag}.start`;
  const marker = (w: string) => `.${tag}.late-${w}`;
  const stop = `.${tag}.late-stop`;
  const markers = WRITERS.map(([w]) => marker(w)).join(" ");
  // Each writer stops by itself once no check could still look.
  const beats = Math.ceil(timeoutMs / 1000) + Math.ceil(GRACE_MS / 1000) + 4;
  const beat = (write: string) =>
    `i=0; while [ $i -lt ${beats} ] && [ ! -e ${stop} ]; do ${write}sleep 1; i=$((i + 1)); done`;
  const loop = `${beat(': > "$0"; ')}; rm -f "$0"`;
  const script = [
    `: > ${start}`,
    `loop='${loop}'`,
    `idle='${beat("")}'`,
    `sh -c "$loop" ${marker("background")} &`,
    `setsid env ${ownSession(tag)} sh -c "$loop" ${marker("session")} &`,
    `env -i PATH="$PATH" sh -c "$loop" ${marker("blank")} &`,
    `sh -c "$idle" | sh -c "$loop" ${marker("pipeline")}`,
    "wait",
  ].join("\n");
  const exec = (script: string, timeoutMs: number) =>
    s.call(
      "link.exec",
      { target: place.target, script, cwd: ".", timeoutMs },
      timeoutMs + GRACE_MS,
    ) as Promise<ExecResult>;
  const probe = async (script: string): Promise<string> => {
    try {
      return (await exec(script, PROBE_MS)).stdout;
    } catch (err) {
      throw new CheckFailed(
        `the link.exec that looks for the markers failed: ${describeCall(err)}`,
        [describeCall(err)],
      );
    }
  };

  let clean = false;
  try {
    const outcome = await judge();
    clean = outcome.result === "pass" && link.remoteOnTimeout !== "unknown";
    return outcome;
  } finally {
    if (!clean)
      await exec(
        `: > ${stop}; sleep ${STOP_S}; rm -f ${stop} ${start} ${markers}; true`,
        PROBE_MS,
      ).catch(() => undefined);
  }

  async function judge(): Promise<Outcome> {
    const t0 = s.now();
    let r: ExecResult;
    try {
      r = await exec(script, timeoutMs);
    } catch (err) {
      throw new CheckFailed(
        `a script that outlives timeoutMs ${timeoutMs}: ${failedCall("link.exec", err)}`,
        [describeCall(err)],
      );
    }
    const took = s.now() - t0;

    // From the answer (or, for "stopping", the end of its grace) nothing the
    // script started may write: clear the markers, wait out a beat, look.
    if (link.remoteOnTimeout === "stopping") await s.sleep(GRACE_MS);
    const began = await probe(
      `test -e ${start} && echo MU-CHECK:started; rm -f ${start} ${markers}; true`,
    );
    await s.sleep(WATCH_MS);
    const after = await probe(
      [
        ...WRITERS.map(([w]) => `test -e ${marker(w)} && echo MU-CHECK:${w}`),
        link.remoteOnTimeout === "unknown" ? "true" : `rm -f ${markers}; true`,
      ].join("\n"),
    );

    if (r.exitCode !== null) {
      throw new CheckFailed(
        `a script past timeoutMs ${timeoutMs} was answered with exitCode ${r.exitCode} after ${took} ms, not exitCode null`,
        [canonical(r)],
      );
    }
    const answered = `${place.label}: answered exitCode null after ${took} ms (timeoutMs ${timeoutMs})`;
    if (!began.includes("MU-CHECK:started")) {
      throw new CheckFailed(`${answered}, but the script never began`, [
        `it would have written ${start} in the login directory at once; the next script found none`,
      ]);
    }
    if (link.remoteOnTimeout === "unknown")
      return pass(`${answered}; remoteOnTimeout unknown promises nothing after that`);
    const ranOn = WRITERS.filter(([w]) => after.includes(`MU-CHECK:${w}`)).map(([, what]) => what);
    if (ranOn.length > 0) {
      throw new CheckFailed(
        `remoteOnTimeout is '${link.remoteOnTimeout}', yet ${ranOn.join(", ")} the script started went on running after the answer${link.remoteOnTimeout === "stopping" ? ` and its ${GRACE_MS} ms grace` : ""}`,
        [
          `each rewrites its marker in the login directory every second; the markers were removed ${link.remoteOnTimeout === "stopping" ? "at the end of the grace" : "as the answer came"} and were back ${WATCH_MS} ms later`,
        ],
      );
    }
    return pass(
      `${answered}; none of its background job, pipeline member, own-session and blank-environment processes ran on (${link.remoteOnTimeout})`,
    );
  }
}

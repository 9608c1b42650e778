import { randomBytes } from "node:crypto";
import { canonical } from "../plugin/load-rules.js";
import type { InitializeResult, JobSeam } from "../protocol/declaration.js";
import { EFFECT_MS, onHost, startCall, stopJob } from "./job-seam.js";
import { runView, type View } from "./run-view.js";
import type { RunContext, Session } from "./session.js";
import { CheckFailed, must, type Outcome, pass, skip } from "./verdict.js";
import { clip } from "./wire.js";

// A job runs the spec's command, in the spec's cwd, with the spec's env.
// The check can only see that through the job itself: with a command the
// kind honours, it starts one that prints where it runs and what one
// variable holds, then reads that line in the job's view, as a pane would.
// The line must be exactly the one expected: a value merely contained in a
// longer line (a variable with more appended) is not the value sent.

const VAR = "MU_CHECK_SPEC";
/** Absolute and present on every backend, and not where a job would land by accident. */
const CWD = "/";
const SEEN_MS = 10_000;

/** The view's whole lines so far (a line still being written is not one yet). */
const lines = (out: string) =>
  out
    .split("\n")
    .slice(0, -1)
    .map((l) => l.replace(/\r$/, ""));

export function specSkip(hello: InitializeResult): Outcome | undefined {
  return hello.seams.job?.honours?.command === true
    ? undefined
    : skip(
        "the kind does not honour a command (honours.command), so no job of the check's can report its cwd and environment",
      );
}

export async function jobSpec(
  ctx: RunContext,
  s: Session,
  hello: InitializeResult,
  params: Record<string, string>,
): Promise<Outcome> {
  const job = hello.seams.job as JobSeam;
  const value = randomBytes(8).toString("hex");
  const envHonoured = job.honours?.env !== false;
  const cmd = `printf 'mu-check-spec %s %s\\n' "$(pwd)" "\${${VAR}:-unset}"; exec sleep 600`;
  const want = `mu-check-spec ${CWD} ${envHonoured ? value : "unset"}`;
  let seen = "";
  await onHost(s, ctx, hello, params, async (where) => {
    const { msgId: _m, ...call } = startCall(ctx, job, where, params);
    const spec = {
      ...call.spec,
      cmd,
      commandSource: "command",
      cwd: CWD,
      env: envHonoured ? { [VAR]: value } : {},
    };
    const reply = (await must("job.start", s.call("job.start", { ...call, spec }, EFFECT_MS))) as {
      view: View;
      handle?: string;
    };
    const target = structuredClone(call.target);
    if (reply.handle) target.job.handle = reply.handle;
    const started = { key: call.key, target, reply, stopped: false };
    try {
      const { out } = await runView(reply.view, SEEN_MS, (o) => lines(o).includes(want));
      const line = lines(out).find((l) => l.startsWith("mu-check-spec "));
      if (line !== want)
        throw new CheckFailed(
          line
            ? `the job's command reported cwd and ${VAR} as '${line.slice(14)}', not '${CWD} ${envHonoured ? value : "unset"}'`
            : `the job's view showed no line from its command within ${SEEN_MS / 1000} s: the command was not run, or not where its view shows`,
          [
            `command: ${cmd}`,
            `view: ${clip(canonical(reply.view))}`,
            `view printed: ${clip(out.trim().split("\n").join(" | ")) || "nothing"}`,
          ],
        );
      seen = `in cwd ${CWD}${envHonoured ? ` with ${VAR} as set in env` : ""}`;
      await stopJob(s, started);
    } finally {
      if (!started.stopped) await stopJob(s, started, "cleanup job.stop").catch(() => {});
    }
  });
  return pass(`a job started with a command of the check's ran it ${seen}, as its view shows`);
}

import { canonical } from "../plugin/load-rules.js";
import { READ_TIMEOUT_MS } from "../plugin/supervisor.js";
import type { InitializeResult, JobSeam } from "../protocol/declaration.js";
import { onHost, withJob } from "./job-seam.js";
import { runView, type View } from "./run-view.js";
import type { RunContext, Session } from "./session.js";
import { CheckFailed, must, type Outcome, pass } from "./verdict.js";
import { clip } from "./wire.js";

// job.attach is how `agent reattach` opens a new view of a detached job,
// and job.checkSteps is what `host check` asks: the first must answer a
// view whose command really runs, the second must answer within the read
// timeout, like every read.

/** A pane's command that has not failed by then is taken to run. */
const RUNS_MS = 1000;

export async function jobAttach(
  ctx: RunContext,
  s: Session,
  hello: InitializeResult,
  params: Record<string, string>,
): Promise<Outcome> {
  const job = hello.seams.job as JobSeam;
  let shown = "";
  await onHost(s, ctx, hello, params, (where) =>
    withJob(s, ctx, job, where, params, async (j) => {
      const v = (await must("job.attach", s.call("job.attach", { target: j.target }))) as View;
      const { ended, err } = await runView(v, RUNS_MS);
      if (ended)
        throw new CheckFailed(
          `the view job.attach answered for a running job ended within ${RUNS_MS} ms (${ended.signal ? `signal ${ended.signal}` : `exit ${ended.code}`}), where a pane must show the job`,
          [`view: ${clip(canonical(v))}`, ...(err ? [`stderr: ${clip(err.trim())}`] : [])],
        );
      shown = clip(v.command, 80);
    }),
  );
  return pass(`job.attach of a running job answered a view that runs (${shown})`);
}

export async function jobCheckSteps(
  ctx: RunContext,
  s: Session,
  hello: InitializeResult,
  params: Record<string, string>,
): Promise<Outcome> {
  const job = hello.seams.job as JobSeam;
  // With no phase declared, mu's host check still asks the agent phase.
  const phases = job.checks.length > 0 ? job.checks : ["agent"];
  const counts: string[] = [];
  await onHost(s, ctx, hello, params, async (where) => {
    for (const phase of phases) {
      const t0 = s.now();
      const steps = (await must(
        `job.checkSteps (${phase})`,
        s.call(
          "job.checkSteps",
          { target: where, phase, agent: params.harness ?? "claude" },
          READ_TIMEOUT_MS,
        ),
      )) as unknown[];
      counts.push(
        `${phase}: ${steps.length} step${steps.length === 1 ? "" : "s"} in ${s.now() - t0} ms`,
      );
    }
  });
  return pass(`job.checkSteps answered within ${READ_TIMEOUT_MS / 1000} s (${counts.join("; ")})`);
}

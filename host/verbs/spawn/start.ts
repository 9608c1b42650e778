import { EFFECT_MS } from "../../effects/resolve.js";
import { runEffect } from "../../effects/run-effect.js";
import { RefusedError, UnknownOutcomeError } from "../../errors.js";
import { jobTarget } from "../../jobs/job-calls.js";
import { recordStarted, startReplyProblem, takeBackUnstarted } from "../../jobs/job-rules.js";
import { agentSubject, type JobRecord, jobByKey, jobOf } from "../../jobs/records.js";
import type { SitePlan } from "../../jobs/site.js";
import { removeTreesLeft, sayTrees } from "../../jobs/trees-left.js";
import type { JobSeam } from "../../protocol/declaration.js";
import { pauseAt } from "../../testbed-pause.js";
import { TESTBED_BUILD } from "../../testbed-plant.js";
import {
  firstPrompt,
  type Recorded,
  type SpawnCtx,
  type SpawnRequest,
  type StartPlan,
} from "./context.js";
import { honoursOf } from "./refusals.js";
import { closedMeanwhile } from "./remedy.js";

// Step 4 of a spawn: job.start, journaled like every effect, with the whole
// JobSpec. An at-start kind's first prompt goes with it, and its answer
// carries the baseline.

export function planStart(
  ctx: SpawnCtx,
  req: SpawnRequest,
  job: JobSeam,
  instance: string,
  plan: SitePlan | undefined,
): StartPlan {
  const { ws, name, role, opts } = req;
  const atStart = job.firstTurn === "at-start";
  const key = `job-${ctx.io.ports.random.hex(8)}`;
  const msgId = `msg-${ctx.io.ports.random.hex(8)}`;
  const text = firstPrompt(opts);
  const spec: Record<string, unknown> = {
    workstream: ws,
    name,
    harness: opts.harness ?? "claude",
    role,
    cmd: opts.command ?? opts.harness ?? "claude",
    commandSource: opts.command === undefined ? "harness" : "command",
    cwd: plan?.tree ?? ".",
    env: honoursOf(job).env ? { MU_AGENT: `${ws}/${name}` } : {},
    ...(atStart && text !== undefined ? { firstPrompt: { text, msgId } } : {}),
  };
  return { job, atStart, key, msgId, spec, instance };
}

/**
 * Sends the start and returns the record as the answer left it. A start
 * that definitely did not happen was rolled back, and its tree goes too; an
 * at-start one with no definite answer is never resent, since it carried a
 * delivery only `mu agent check` can settle.
 */
export async function startJob(
  ctx: SpawnCtx,
  req: SpawnRequest,
  start: StartPlan,
  rec: Recorded,
  /** Whether the spawn made a tree (--worktree): a start that failed owes its removal. */
  withSite: boolean,
): Promise<JobRecord> {
  const { io, store, sup, h } = ctx;
  const { ws, name } = req;
  const { key, msgId, spec, atStart, job } = start;
  const target = jobTarget(h, rec.j, rec.incarnation);
  try {
    await runEffect(
      { ports: io.ports, store, sup, reg: h.reg, instance: start.instance },
      {
        subject: agentSubject(ws, name),
        method: "job.start",
        key,
        params: { target, key, spec },
        timeoutMs: EFFECT_MS,
        check: (r) => startReplyProblem(job.handle, atStart, r as never),
        // In the intent's commit: a record taken back meanwhile means no start.
        before: (db) => {
          if (jobOf(db, ws, name)?.key !== key) {
            throw new RefusedError(
              "spawn.taken-back",
              "agent",
              `the spawn of ${ws}/${name} was taken back by another mu before its start was sent`,
              {
                hint: "nothing was started; spawn again",
              },
            );
          }
        },
        done: (db, r) => recordStarted(db, key, (r ?? {}) as never, io.ports.clock.now()),
        // A start that definitely failed takes the record back, owing its tree's removal.
        failed: (db) => {
          const j = jobByKey(db, key);
          if (j) takeBackUnstarted(db, j, io.ports.clock.now());
        },
      },
      req.next,
    );
  } catch (err) {
    // Removed through its row, so a mu killed first, or a removal that fails,
    // leaves it listed; a record another mu took back is that mu's to finish.
    const takenBack = err instanceof RefusedError && err.code === "spawn.taken-back";
    if (withSite && !takenBack && !(err instanceof UnknownOutcomeError))
      sayTrees(io, "spawn", await removeTreesLeft(io, store, sup, ws, name), key);
    if (atStart && err instanceof UnknownOutcomeError) {
      throw new UnknownOutcomeError(
        "spawn.first-delivery-unknown",
        "agent",
        `the start of ${ws}/${name} carried its first delivery and has no definite answer, so delivery ${msgId} is unknown (key ${key}): ${err.message}`,
        { hint: `nothing was resent; resolve it with: mu agent check ${name} ${msgId} -w ${ws}` },
      );
    }
    throw err;
  }
  if (TESTBED_BUILD) await pauseAt("spawn.started", io.ports, sup, h.reg);
  const started = await store.read((db) => jobOf(db, ws, name));
  // Once its job runs, a close by another mu does not wait for this spawn:
  // it stops the job and ends the record, and the spawn has nothing left to do.
  if (started?.key !== key) {
    throw closedMeanwhile(ws, name, rec.j.host, "just after its job started");
  }
  return started;
}

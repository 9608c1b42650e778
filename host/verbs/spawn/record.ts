import type { Io } from "../../cli/io.js";
import { RefusedError } from "../../errors.js";
import { hostStill, pluginStill } from "../../hosts/guards.js";
import { getHost } from "../../hosts/records.js";
import { admit, claimTask, deadlineMarginMs } from "../../jobs/admission.js";
import { resolveAgent } from "../../jobs/job-calls.js";
import { agentAsRead } from "../../jobs/job-guard.js";
import { takeBackUnstarted } from "../../jobs/job-rules.js";
import {
  type AgentRow,
  agentOf,
  type JobRecord,
  jobByKey,
  jobOf,
  putAgent,
  putJob,
  putReceipt,
} from "../../jobs/records.js";
import type { SitePlan } from "../../jobs/site.js";
import { removerOf, removingRefusal, type TreeLeft, treesLeftOf } from "../../jobs/trees-left.js";
import { anotherLive } from "../../ports/another-live.js";
import type { ProcessId } from "../../ports/types.js";
import type { Store } from "../../store/index.js";
import type { Recorded, SpawnCtx, SpawnRequest, StartPlan } from "./context.js";

// Step 2 of a spawn: the job record. One job per workstream and name; what
// an earlier spawn of the name left is settled first, and only a started
// job whose view never opened is picked up again.

const exists = (ws: string, name: string, what: string) =>
  new RefusedError("agent.exists", "agent", `${ws}/${name} ${what}`, {
    hint: `close it first: mu agent close ${name} -w ${ws}`,
  });

/** A starting record whose writer still lives is that mu's: refuse to take it back. */
export function refuseWhileWriterLives(io: Io, j: JobRecord): void {
  if (j.writer && io.ports.liveness.alive(j.writer)) {
    throw new RefusedError(
      "agent.starting",
      "agent",
      `${j.workstream}/${j.agent} is being spawned by mu pid ${j.writer.pid}`,
      { hint: "wait for that mu to finish, then run the verb again" },
    );
  }
}

/** A job an earlier spawn of the name left, and the view it had opened, if any. */
export interface Prior {
  job: JobRecord;
  pane: string | null;
}

/**
 * What the name already holds, once its pending effects are settled: a job
 * to resume at its view or at its readiness, nothing (a new spawn may go
 * on), or a refusal.
 */
export async function priorRecord(ctx: SpawnCtx, req: SpawnRequest): Promise<Prior | undefined> {
  const { io, store, sup } = ctx;
  const { ws, name } = req;
  await resolveAgent(io, store, sup, ws, name, req.next);
  const before = await store.read((db) => ({
    job: jobOf(db, ws, name),
    agent: agentOf(db, ws, name),
  }));
  if (before.job?.state === "starting") {
    // Resolved above and still starting: its start was never journaled, so
    // never sent, unless the mu that wrote it is still at work on it.
    const stale = before.job;
    refuseWhileWriterLives(io, stale);
    await store.write((db) => {
      const cur = jobByKey(db, stale.key);
      if (cur) {
        refuseWhileWriterLives(io, cur);
        takeBackUnstarted(db, cur, io.ports.clock.now());
      }
    });
    return undefined;
  }
  if (!before.job) return undefined;
  const job = before.job;
  if (job.state === "running" && job.host === req.opts.host) {
    // A job whose view was never opened resumes at its view. A live row
    // whose spawn finished is not, even once its view died: a bound job
    // ended with its view, a detached one is reattached (mu agent reattach).
    if (before.agent?.state !== "live") {
      await takeOver(io, store, job, before.agent);
      return { job, pane: null };
    }
    // A spawn cut short after its view opened (its writer is cleared only
    // once readiness and the first prompt are done) resumes at readiness,
    // in the view it opened, while that view lives: a new view would end a
    // bound job. One whose view died since opens a new one first.
    const pane = before.agent.pane;
    if (job.writer !== null) {
      await takeOver(io, store, job, before.agent);
      return { job, pane: pane !== null && (await ctx.mux.alive(pane)) ? pane : null };
    }
  }
  // A job a close stopped but could not collect from still holds the name.
  throw exists(
    ws,
    name,
    job.state === "stopped"
      ? `is stopped on host ${job.host} and owes its final collect`
      : `already runs on host ${job.host}`,
  );
}

/**
 * Takes a spawn cut short over for this mu, in one commit, only as this mu
 * read it: refused while the mu that wrote it, or another that took it over
 * first, still lives, and refused as changed once another mu has finished,
 * closed, reattached or taken it over since the read, so two spawns run
 * again at once never both finish it (a second view, a second readiness).
 */
export async function takeOver(
  io: Io,
  store: Store,
  read: JobRecord,
  row: AgentRow | undefined,
): Promise<void> {
  await store.write((db) => {
    const cur = jobByKey(db, read.key);
    if (cur && anotherLive(io.ports.liveness, cur.writer)) refuseWhileWriterLives(io, cur);
    if (!cur || !sameProcess(cur.writer, read.writer) || !agentAsRead(db, read, row))
      throw changedMeanwhile(read);
    putJob(db, { ...cur, writer: io.ports.liveness.self() });
  });
}

const sameProcess = (a: ProcessId | null, b: ProcessId | null) =>
  a === b || (a !== null && b !== null && a.pid === b.pid && a.start === b.start);

const changedMeanwhile = (j: JobRecord) =>
  new RefusedError(
    "agent.changed",
    "agent",
    `${j.workstream}/${j.agent}'s unfinished spawn (job ${j.key}) was finished, closed or taken over by another mu meanwhile; this mu left it alone`,
    { hint: "see: mu agent list" },
  );

/**
 * The record, the name's fence, a provider host's admission and, for an
 * at-start kind, the agent's placeholder, the task claim and the first
 * delivery's receipt: one commit, before anything is sent.
 */
export async function writeRecord(
  ctx: SpawnCtx,
  req: SpawnRequest,
  start: StartPlan,
  plan: SitePlan | undefined,
): Promise<Recorded> {
  const { io, store, h } = ctx;
  const { ws, name, opts } = req;
  const { job, atStart, key, msgId, spec } = start;
  const now = io.ports.clock.now();
  const margin = deadlineMarginMs(io.ports.env);
  // The host as it is now, in this commit: another mu may have removed it
  // (or its plugin), or found it lost or drained, since the verb began.
  const guards = [hostStill(opts.host, h), pluginStill(h.reg.name, ["job", "channel"])];
  return store.guarded(guards, (db) => {
    const other = jobOf(db, ws, name);
    if (other) {
      // Another mu wrote it since the read and may still be at work on it:
      // a close now would end the spawn it is finishing.
      refuseWhileWriterLives(io, other);
      throw exists(ws, name, "already exists");
    }
    // A tree a close of the name left since this spawn removed them: its
    // row must never stand beside a job of the name, whose tree is at its path.
    const left = treesLeftOf(db, ws, name);
    if (left.length > 0) throw removingRefusal(left[0] as TreeLeft, removerOf(io, left));
    const host = h.provider ? getHost(db, opts.host) : undefined;
    if (host) admit(db, host, now, margin);
    if (opts.task !== undefined) claimTask(db, opts.task, `${ws}/${name}`);
    const incarnation = (agentOf(db, ws, name)?.incarnation ?? 0) + 1;
    const j: JobRecord = {
      key,
      workstream: ws,
      agent: name,
      host: opts.host,
      plugin: h.reg.name,
      instance: start.instance,
      kind: job.kind,
      viewKind: job.view,
      handle: null,
      state: "starting",
      spec,
      view: null,
      firstMsgId: atStart ? msgId : null,
      firstInc: null,
      owesCollect: plan !== undefined,
      site: plan?.tree ?? null,
      siteSha: plan?.sha ?? null,
      localRepo: plan?.localRepo ?? null,
      collectFailures: 0,
      nextCollectAt: null,
      taskId: opts.task ?? null,
      writer: io.ports.liveness.self(),
      createdAt: now,
      updatedAt: now,
    };
    putJob(db, j);
    putAgent(db, {
      workstream: ws,
      name,
      incarnation,
      jobKey: key,
      host: opts.host,
      channelPlugin: h.reg.name,
      channel: job.channel ?? "",
      pane: null,
      // An on-send kind's row stays out of sight until its view runs; it is
      // written now only to hold the incarnation the start is sent with.
      state: atStart ? "placeholder" : "closed",
      channelInc: null,
      // An at-start agent's first turn is the start's: its wait counts from 0.
      waitAfter: atStart ? 0 : null,
      createdAt: now,
    });
    if (atStart)
      putReceipt(db, { msgId, workstream: ws, agent: name, state: "sending", createdAt: now });
    return { j, incarnation };
  });
}

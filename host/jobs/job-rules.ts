import type { Database } from "sql.js";
import { DELIVERIES } from "../effects/decide.js";
import type { Intent } from "../effects/journal.js";
import type { SubjectRules } from "../effects/resolve.js";
import type { ProcessId } from "../ports/types.js";
import { deliveryReplyProblem, incarnationAfter } from "./delivery-reply.js";
import {
  agentOf,
  deleteJob,
  deleteReceipt,
  type JobRecord,
  jobByKey,
  putAgent,
  putJob,
  putReceipt,
} from "./records.js";
import { isAtStart, startCaps } from "./start-caps.js";
import { oweRemoval } from "./trees-left.js";
import { recordUndelivered, undeliveredLine } from "./undelivered.js";

// What the rule table's rows mean for an agent's records: a start found is
// the job running (its view still to open), a start proven never to have
// happened rolls the attempt back, a stop answered ends the record.

interface Started {
  handle?: string;
  view?: Record<string, unknown>;
  baseline?: { runs: number; incarnation?: number };
}

/** Why a start reply (or a lookup's found) does not do for its request, or undefined. */
export function startReplyProblem(
  handleKind: string,
  atStart: boolean,
  r: Started | undefined,
): string | undefined {
  if (handleKind === "reply" && !r?.handle) return "a reply kind's start carries no handle";
  if (atStart && r?.baseline?.runs !== 0)
    return "an at-start start must carry baseline with runs 0";
  return undefined;
}

/** Records a start that took place: the handle, the view to open, the first delivery accepted. */
export function recordStarted(db: Database, key: string, r: Started, now: number): void {
  const job = jobByKey(db, key);
  if (!job) return;
  const atStart = job.firstMsgId !== null;
  putJob(db, {
    ...job,
    handle: r.handle ?? job.handle,
    view: r.view ?? job.view,
    state: "running",
    firstInc: atStart ? (r.baseline?.incarnation ?? job.firstInc) : job.firstInc,
    updatedAt: now,
  });
  if (atStart && job.firstMsgId) {
    putReceipt(db, {
      msgId: job.firstMsgId,
      workstream: job.workstream,
      agent: job.agent,
      state: "accepted",
      createdAt: now,
    });
  }
}

/**
 * Undoes a spawn attempt that never started: record, placeholder, claim,
 * receipt. A forgotten one (mu agent forget) may have started: its first
 * delivery's receipt is kept, as unknown, rather than deleted.
 */
export function rollBackSpawn(
  db: Database,
  key: string,
  firstReceipt: "delete" | "unknown" = "delete",
): void {
  const j = jobByKey(db, key);
  if (!j) return;
  const a = agentOf(db, j.workstream, j.agent);
  deleteJob(db, key);
  if (a) putAgent(db, { ...a, state: "closed", pane: null });
  if (j.taskId !== null) {
    db.run("UPDATE tasks SET state = 'open', claimed_by = NULL WHERE id = ? AND claimed_by = ?", [
      j.taskId,
      `${j.workstream}/${j.agent}`,
    ]);
  }
  if (j.firstMsgId === null) return;
  if (firstReceipt === "delete") deleteReceipt(db, j.firstMsgId);
  else
    putReceipt(db, {
      msgId: j.firstMsgId,
      workstream: j.workstream,
      agent: j.agent,
      state: "unknown",
      createdAt: j.createdAt,
    });
}

/**
 * Takes back a spawn that never started. Its site step may have made a tree
 * (a spawn killed there or after, one whose tree script went unanswered, a
 * start proven never to have happened), so one is owed its removal in the
 * same commit; a tree never made is removed as one already gone.
 */
export function takeBackUnstarted(db: Database, j: JobRecord, now: number): void {
  rollBackSpawn(db, j.key);
  if (j.site && j.siteSha) oweRemoval(db, j, j.site, j.siteSha, now, "spawn");
}

/**
 * Ends a job's record once its stop was answered, unless it still owes its
 * final collect: then it stays, stopped, until the collect is done. The
 * agent's row keeps naming its view: a detached view is killed only after
 * the stop, and a mu that dies before it must leave the next verb a pane
 * to kill (forgetLeftView). The mu whose own stop this is goes on to the
 * collect: it is recorded as the stopped job's writer in the same commit,
 * so mu state names it while it fetches, not the collect as owed.
 */
export function recordStopped(db: Database, key: string, by?: ProcessId): void {
  const job = jobByKey(db, key);
  if (!job) return;
  const a = agentOf(db, job.workstream, job.agent);
  if (a) putAgent(db, { ...a, state: "closed" });
  if (job.owesCollect) putJob(db, { ...job, state: "stopped", writer: by ?? job.writer });
  else deleteJob(db, key);
}

/** A delivery's receipt, once mu knows the agent took it. */
function recordDelivered(
  db: Database,
  i: Intent,
  now: number,
  state = "accepted",
  result?: unknown,
): void {
  const [ws = "", name = ""] = i.subject.slice("agent:".length).split("/");
  // What the next wait counts from: a resend's baseline, an interrupt's or a receipt's runs.
  const r = (result ?? {}) as { baseline?: number; runs?: number; incarnation?: number };
  const after = typeof r.baseline === "number" ? r.baseline : r.runs;
  const a = agentOf(db, ws, name);
  const inc = incarnationAfter(i.method, r.incarnation, a?.channelInc ?? null);
  if (a && state === "accepted" && (after !== undefined || inc !== a.channelInc)) {
    putAgent(db, { ...a, waitAfter: after ?? a.waitAfter, channelInc: inc });
  }
  const created = db.exec("SELECT created_at FROM receipts WHERE msg_id = ?", [i.key])[0]
    ?.values[0]?.[0];
  putReceipt(db, {
    msgId: i.key,
    workstream: ws,
    agent: name,
    state,
    createdAt: created === undefined ? now : Number(created),
  });
}

/** True when a later delivery to the same agent was journaled (pending or answered). */
function newerDelivery(db: Database, i: Intent): boolean {
  const marks = DELIVERIES.map(() => "?").join(", ");
  const pending = db.exec(
    `SELECT count(*) FROM intents WHERE subject = ? AND id > ? AND method IN (${marks})`,
    [i.subject, i.id, ...DELIVERIES],
  )[0]?.values[0]?.[0];
  const [ws = "", name = ""] = i.subject.slice("agent:".length).split("/");
  const later = db.exec(
    "SELECT count(*) FROM receipts WHERE workstream = ? AND agent = ? AND created_at > ? AND msg_id != ?",
    [ws, name, i.writtenAt, String(i.params.msgId ?? "")],
  )[0]?.values[0]?.[0];
  return Number(pending) > 0 || Number(later) > 0;
}

/** The key of the job a delivery was sent to, as its target named it. */
function deliveryJobKey(i: Intent): string {
  const t = i.params.target as { job?: { key?: string } } | undefined;
  return String(t?.job?.key ?? "");
}

export const jobRules: SubjectRules = {
  caps: (hello, i) => startCaps(hello.seams, i),
  lookupMethod: "job.lookup",
  fileHandle: (hello) => hello.seams.job?.handle === "file",
  rowName: (i, row) => {
    if (!isAtStart(i) || !row.startsWith("start.")) return row;
    if (row === "start.lookup.found") return "atstart.found";
    if (row === "start.lookup.none.proven") return "atstart.none.proven";
    return "atstart.unresolved";
  },
  record: (db, i, result, now) => {
    if (i.method === "job.start") recordStarted(db, i.key, (result ?? {}) as Started, now);
    else if (i.method === "job.stop") recordStopped(db, i.key);
    else if (DELIVERIES.includes(i.method)) recordDelivered(db, i, now, "accepted", result);
  },
  blocks: (i) => !DELIVERIES.includes(i.method),
  abandon: (db, i, now) => recordDelivered(db, i, now, "unknown"),
  undelivered: recordUndelivered,
  sendAgain: undeliveredLine,
  delivery: (db, hello, i) => {
    if (!DELIVERIES.includes(i.method)) return undefined;
    const caps = hello.seams.channel?.caps ?? {};
    return {
      receiptExact: caps.receipt === "exact",
      dedupeExact: caps.dedupe === "exact",
      hasMsgId: typeof i.params.msgId === "string",
      hasText: typeof i.params.text === "string",
      newerWritten: newerDelivery(db, i),
      jobEnded: jobByKey(db, deliveryJobKey(i))?.state !== "running",
    };
  },
  rollback: (db, i, now) => {
    const j = i.method === "job.start" ? jobByKey(db, i.key) : undefined;
    if (j) takeBackUnstarted(db, j, now);
  },
  checkFound: (hello, i, found) => {
    const kind = hello.seams.job?.handle ?? "";
    const f = (found ?? {}) as Started;
    // A reply kind's found repeats its whole start reply, view included.
    if (kind === "reply" && !f.view) return "a reply kind's found carries no view";
    return startReplyProblem(kind, isAtStart(i), f);
  },
  checkResult: (hello, i, result) => {
    if (i.method === "job.start")
      return startReplyProblem(
        hello.seams.job?.handle ?? "",
        isAtStart(i),
        (result ?? {}) as Started,
      );
    if (DELIVERIES.includes(i.method)) {
      return deliveryReplyProblem(
        i.method,
        (result ?? {}) as Record<string, unknown>,
        typeof i.params.msgId === "string" ? i.params.msgId : undefined,
        hello.seams.channel?.name ?? "",
        i.params.expectIncarnation,
      );
    }
    return undefined;
  },
};

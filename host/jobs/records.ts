import type { Database } from "sql.js";
import type { ProcessId } from "../ports/types.js";

// Job records and agent rows. A job record is written before job.start is
// sent and names the agent's fence: one job per workstream and name. Its key
// is the start's effect key for its whole life. An agent row points at its
// job and records the channel (plugin and name) its readings come from.

/** stopped: the job ended but its final collect is still owed. */
export type JobState = "starting" | "running" | "stopped";

export interface JobRecord {
  key: string;
  workstream: string;
  agent: string;
  host: string;
  plugin: string;
  instance: string;
  kind: string;
  viewKind: "bound" | "detached";
  handle: string | null;
  state: JobState;
  spec: Record<string, unknown>;
  /** The view command a start or lookup returned, until a pane runs it. */
  view: Record<string, unknown> | null;
  firstMsgId: string | null;
  firstInc: number | null;
  owesCollect: boolean;
  /** The worktree on the host the job runs in, when spawned with --worktree. */
  site: string | null;
  /** The commit the site was made from. */
  siteSha: string | null;
  /** The checkout the spawn came from: where the final collect fetches into. */
  localRepo: string | null;
  /** In-life collects that failed in a row, and when the next may run. */
  collectFailures: number;
  nextCollectAt: number | null;
  /** The task a --task spawn claimed: a rolled-back attempt reopens it, and only it. */
  taskId: string | null;
  /** The mu that wrote the record: while it lives, its starting record is its own. */
  writer: ProcessId | null;
  createdAt: number;
  updatedAt: number;
}

export interface AgentRow {
  workstream: string;
  name: string;
  incarnation: number;
  jobKey: string;
  host: string;
  channelPlugin: string;
  channel: string;
  pane: string | null;
  /**
   * placeholder: written before an at-start start, so the first delivery has
   * an agent; closed: kept so the next spawn of the name counts incarnations on.
   */
  state: "placeholder" | "live" | "closed";
  /** The channel's incarnation as last seen (a baseline, a reading); deliveries expect it. */
  channelInc: number | null;
  /** The run count the next wait counts from: the last delivery's baseline (0 after a restart). */
  waitAfter: number | null;
  createdAt: number;
}

const JOB_COLS =
  "key, workstream, agent, host, plugin, instance, kind, view_kind, handle, state, spec, view, first_msg_id, first_inc, owes_collect, site, local_repo, collect_failures, next_collect_at, task_id, writer_pid, writer_start, created_at, updated_at, site_sha";

function toJob(r: unknown[]): JobRecord {
  return {
    key: String(r[0]),
    workstream: String(r[1]),
    agent: String(r[2]),
    host: String(r[3]),
    plugin: String(r[4]),
    instance: String(r[5]),
    kind: String(r[6]),
    viewKind: String(r[7]) as JobRecord["viewKind"],
    handle: r[8] === null ? null : String(r[8]),
    state: String(r[9]) as JobState,
    spec: JSON.parse(String(r[10])) as Record<string, unknown>,
    view: r[11] === null ? null : (JSON.parse(String(r[11])) as Record<string, unknown>),
    firstMsgId: r[12] === null ? null : String(r[12]),
    firstInc: r[13] === null ? null : Number(r[13]),
    owesCollect: Number(r[14]) === 1,
    site: r[15] === null ? null : String(r[15]),
    siteSha: r[24] === null ? null : String(r[24]),
    localRepo: r[16] === null ? null : String(r[16]),
    collectFailures: Number(r[17]),
    nextCollectAt: r[18] === null ? null : Number(r[18]),
    taskId: r[19] === null ? null : String(r[19]),
    writer: r[20] === null ? null : { pid: Number(r[20]), start: String(r[21]) },
    createdAt: Number(r[22]),
    updatedAt: Number(r[23]),
  };
}

export function jobOf(db: Database, workstream: string, agent: string): JobRecord | undefined {
  const res = db.exec(`SELECT ${JOB_COLS} FROM jobs WHERE workstream = ? AND agent = ?`, [
    workstream,
    agent,
  ]);
  const r = res[0]?.values[0];
  return r ? toJob(r) : undefined;
}

/** The job record whose start carried this key. */
export function jobByKey(db: Database, key: string): JobRecord | undefined {
  const r = db.exec(`SELECT ${JOB_COLS} FROM jobs WHERE key = ?`, [key])[0]?.values[0];
  return r ? toJob(r) : undefined;
}

export function jobsOnHost(db: Database, host: string): JobRecord[] {
  return (db.exec(`SELECT ${JOB_COLS} FROM jobs WHERE host = ?`, [host])[0]?.values ?? []).map(
    toJob,
  );
}

export function allJobs(db: Database): JobRecord[] {
  return (db.exec(`SELECT ${JOB_COLS} FROM jobs ORDER BY workstream, agent`)[0]?.values ?? []).map(
    toJob,
  );
}

export function putJob(db: Database, j: JobRecord): void {
  db.run(
    `INSERT OR REPLACE INTO jobs (${JOB_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      j.key,
      j.workstream,
      j.agent,
      j.host,
      j.plugin,
      j.instance,
      j.kind,
      j.viewKind,
      j.handle,
      j.state,
      JSON.stringify(j.spec),
      j.view === null ? null : JSON.stringify(j.view),
      j.firstMsgId,
      j.firstInc,
      j.owesCollect ? 1 : 0,
      j.site,
      j.localRepo,
      j.collectFailures,
      j.nextCollectAt,
      j.taskId,
      j.writer?.pid ?? null,
      j.writer?.start ?? null,
      j.createdAt,
      j.updatedAt,
      j.siteSha,
    ],
  );
}

export function deleteJob(db: Database, key: string): void {
  db.run("DELETE FROM jobs WHERE key = ?", [key]);
}

const AGENT_COLS =
  "workstream, name, incarnation, job_key, host, channel_plugin, channel, pane, state, channel_inc, wait_after, created_at";

function toAgent(r: unknown[]): AgentRow {
  return {
    workstream: String(r[0]),
    name: String(r[1]),
    incarnation: Number(r[2]),
    jobKey: String(r[3]),
    host: String(r[4]),
    channelPlugin: String(r[5]),
    channel: String(r[6]),
    pane: r[7] === null ? null : String(r[7]),
    state: String(r[8]) as AgentRow["state"],
    channelInc: r[9] === null ? null : Number(r[9]),
    waitAfter: r[10] === null ? null : Number(r[10]),
    createdAt: Number(r[11]),
  };
}

export function agentOf(db: Database, workstream: string, name: string): AgentRow | undefined {
  const r = db.exec(`SELECT ${AGENT_COLS} FROM agents WHERE workstream = ? AND name = ?`, [
    workstream,
    name,
  ])[0]?.values[0];
  return r ? toAgent(r) : undefined;
}

export function allAgents(db: Database): AgentRow[] {
  return (
    db.exec(`SELECT ${AGENT_COLS} FROM agents ORDER BY workstream, name`)[0]?.values ?? []
  ).map(toAgent);
}

export function putAgent(db: Database, a: AgentRow): void {
  db.run(
    `INSERT OR REPLACE INTO agents (${AGENT_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      a.workstream,
      a.name,
      a.incarnation,
      a.jobKey,
      a.host,
      a.channelPlugin,
      a.channel,
      a.pane,
      a.state,
      a.channelInc,
      a.waitAfter,
      a.createdAt,
    ],
  );
}

/** Receipts of deliveries mu journaled: `sending` until a definite answer. */
export function putReceipt(
  db: Database,
  r: { msgId: string; workstream: string; agent: string; state: string; createdAt: number },
): void {
  db.run(
    "INSERT OR REPLACE INTO receipts (msg_id, workstream, agent, state, created_at) VALUES (?, ?, ?, ?, ?)",
    [r.msgId, r.workstream, r.agent, r.state, r.createdAt],
  );
}

/** What mu recorded of a delivery, or undefined when it has no receipt of it. */
export function receiptState(db: Database, msgId: string): string | undefined {
  const v = db.exec("SELECT state FROM receipts WHERE msg_id = ?", [msgId])[0]?.values[0]?.[0];
  return v === undefined || v === null ? undefined : String(v);
}

export function deleteReceipt(db: Database, msgId: string): void {
  db.run("DELETE FROM receipts WHERE msg_id = ?", [msgId]);
}

/** The subject a job's effects are journaled under. */
export const agentSubject = (workstream: string, name: string) => `agent:${workstream}/${name}`;

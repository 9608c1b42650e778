import type { Database } from "sql.js";
import { envMs, MS_VARIABLES } from "../env-ms.js";
import type { Ports } from "../ports/types.js";
import {
  type ArchivedReceipt,
  removeDeadSegmentTemps,
  segmentPath,
  writeSegment,
} from "./archive.js";

// The retention rule. Every commit rewrites the whole database, so its cost
// follows the file's size; what a long-lived crew piles up is delivery
// receipts of jobs that have ended. Those, once settled and old, move to the
// archive (archive.ts) and nothing else ever does: intents, jobs, agents,
// hosts, plugins, profiles, tasks and deadline events all stay.
//
// A receipt stays while anything could still read it for a decision:
// - it is `sending` (its delivery's intent is pending);
// - its agent has any pending intent (resolving one counts later receipts);
// - its agent's live job was started at or before it (it is that job's
//   delivery: `mu agent check`, a resumed spawn's first prompt and
//   `mu state`'s unknown deliveries read these);
// - it is younger than MU_RETAIN_AFTER_MS (default seven days).
// So `mu state` reads nothing retention can move, and shows the same before
// and after a pass.

export const DEFAULT_RETAIN_AFTER_MS = MS_VARIABLES.MU_RETAIN_AFTER_MS.fallback;
export const DEFAULT_RETAIN_EVERY_MS = MS_VARIABLES.MU_RETAIN_EVERY_MS.fallback;
/** Rows moved by one pass at most, so no one commit pays for a whole backlog. */
export const RETAIN_BATCH = 10_000;

export interface RetentionPolicy {
  /** How old a settled receipt of an ended job must be to move. */
  afterMs: number;
  /** How long after a pass that moved less than a batch the next one runs. */
  everyMs: number;
}

export function retentionPolicy(
  env: Readonly<Record<string, string | undefined>>,
): RetentionPolicy {
  return {
    afterMs: envMs(env, "MU_RETAIN_AFTER_MS"),
    everyMs: envMs(env, "MU_RETAIN_EVERY_MS"),
  };
}

/**
 * The receipts the rule lets go, at most `limit`, with their rowids. Table
 * order, not age order: sorting 100,000 rows cost most of a pass, and a
 * scan that stops at the limit does not.
 */
export function movableReceipts(
  db: Database,
  cutoff: number,
  limit: number,
): { rowids: number[]; rows: ArchivedReceipt[] } {
  const res = db.exec(
    `SELECT r.msg_id, r.workstream, r.agent, r.state, r.created_at, r.rowid FROM receipts r
     WHERE r.state != 'sending' AND r.created_at < ?
       AND NOT EXISTS (SELECT 1 FROM jobs j WHERE j.workstream = r.workstream
                       AND j.agent = r.agent AND j.created_at <= r.created_at)
       AND NOT EXISTS (SELECT 1 FROM intents i
                       WHERE i.subject = 'agent:' || r.workstream || '/' || r.agent)
     LIMIT ?`,
    [cutoff, limit],
  );
  const values = res[0]?.values ?? [];
  return {
    rowids: values.map((r) => Number(r[5])),
    rows: values.map((r) => ({
      table: "receipts",
      msgId: String(r[0]),
      workstream: String(r[1]),
      agent: String(r[2]),
      state: String(r[3]),
      createdAt: Number(r[4]),
    })),
  };
}

export interface RetentionState {
  nextAt: number;
  archiveId: string | null;
  archiveSeq: number;
  archived: number;
}

export function retentionState(db: Database): RetentionState {
  const r = db.exec(
    "SELECT next_at, archive_id, archive_seq, archived FROM retention WHERE id = 1",
  )[0]?.values[0];
  return {
    nextAt: Number(r?.[0] ?? 0),
    archiveId: r?.[1] === null || r?.[1] === undefined ? null : String(r[1]),
    archiveSeq: Number(r?.[2] ?? 0),
    archived: Number(r?.[3] ?? 0),
  };
}

/**
 * Runs a pass when one is due, on the in-memory database of a commit that is
 * about to be persisted (the caller holds the lock). The moved rows' segment
 * is durable before this returns; their deletion reaches disk with the
 * commit itself, so a crash in between leaves them in both places with the
 * segment unvouched for, which readers ignore. A segment that cannot be
 * written costs only the pass: the caller's commit goes on without it.
 */
export async function retain(
  ports: Ports,
  dbPath: string,
  db: Database,
  policy: RetentionPolicy,
): Promise<void> {
  const now = ports.clock.now();
  // Only a test's commit takes mu's own tables away; it gets no pass.
  if (db.exec("SELECT 1 FROM sqlite_master WHERE name = 'retention'").length === 0) return;
  const st = retentionState(db);
  if (now < st.nextAt) return;
  await removeDeadSegmentTemps(ports, dbPath).catch(() => {});
  if (st.archiveId === null) {
    // The id reaches disk with this commit, before any segment bears it: a
    // segment under an id the database never kept could not be written over
    // by the next pass, and its rows would be archived twice. The next
    // commit moves the rows.
    db.run("UPDATE retention SET next_at = ?, archive_id = ? WHERE id = 1", [
      now,
      ports.random.hex(4),
    ]);
    return;
  }
  const id = st.archiveId;
  db.exec("BEGIN");
  try {
    const { rowids, rows } = movableReceipts(db, now - policy.afterMs, RETAIN_BATCH);
    // A full batch leaves a backlog: the next commit takes the next batch.
    const nextAt = rows.length === RETAIN_BATCH ? now : now + policy.everyMs;
    if (rows.length === 0) {
      // A pass cut before its commit may have left the next segment, whose
      // rows are all still here; no later pass may come to write over it.
      await ports.fs.unlink(segmentPath(dbPath, id, st.archiveSeq + 1)).catch(() => {});
      db.run("UPDATE retention SET next_at = ? WHERE id = 1", [nextAt]);
      db.exec("COMMIT");
      return;
    }
    // One statement for the whole batch: a DELETE per row took twice as long.
    db.run("DELETE FROM receipts WHERE rowid IN (SELECT value FROM json_each(?))", [
      JSON.stringify(rowids),
    ]);
    const seq = st.archiveSeq + 1;
    db.run(
      "UPDATE retention SET next_at = ?, archive_id = ?, archive_seq = ?, archived = archived + ? WHERE id = 1",
      [nextAt, id, seq, rows.length],
    );
    await writeSegment(ports, dbPath, id, seq, rows);
    db.exec("COMMIT");
  } catch {
    db.exec("ROLLBACK");
    return;
  }
  // Deleted rows leave free pages that every later commit would still write
  // and check; giving them back is what makes the database small again.
  db.exec("VACUUM");
}

import { createHash } from "node:crypto";
import type { Database } from "sql.js";
import type { ProcessId } from "../ports/types.js";

// The intent journal: an effect is written here, durably, before its request
// reaches the plugin, and deleted only on a definite answer. Whatever kills
// mu in between, the next verb on the same subject finds the intent and
// resolves it by the rule table; nothing pending is forgotten.

export interface Intent {
  id: number;
  subject: string;
  method: string;
  plugin: string;
  key: string;
  /** Exactly what every send and resend carries (without the deadline). */
  params: Record<string, unknown>;
  sha256: string;
  instance: string;
  pgid: number;
  writer: ProcessId;
  resolver: ProcessId | null;
  writtenAt: number;
}

export type NewIntent = Omit<Intent, "id" | "sha256" | "resolver">;

export function paramsHash(params: unknown): string {
  return createHash("sha256").update(JSON.stringify(params)).digest("hex");
}

export function writeIntent(db: Database, i: NewIntent): number {
  db.run(
    `INSERT INTO intents (subject, method, plugin, key, params, sha256, instance, pgid, writer_pid, writer_start, written_at)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    [
      i.subject,
      i.method,
      i.plugin,
      i.key,
      JSON.stringify(i.params),
      paramsHash(i.params),
      i.instance,
      i.pgid,
      i.writer.pid,
      i.writer.start,
      i.writtenAt,
    ],
  );
  return Number(db.exec("SELECT last_insert_rowid()")[0]?.values[0]?.[0]);
}

/**
 * An intent is known by its id and its key together: SQLite gives a new
 * row the id of the newest deleted one, so an id read before another mu
 * settled that intent may by now name the next effect on the subject.
 */
export type IntentRef = Pick<Intent, "id" | "key">;

export const sameIntent = (a: IntentRef, b: IntentRef): boolean => a.id === b.id && a.key === b.key;

export function deleteIntent(db: Database, i: IntentRef): void {
  db.run("DELETE FROM intents WHERE id = ? AND key = ?", [i.id, i.key]);
}

export function intentsFor(db: Database, subject: string): Intent[] {
  return intentsWhere(db, "subject = ?", subject);
}

/** The intents whose column matches, oldest first: `where` is mu's own SQL, never input. */
export function intentsWhere(
  db: Database,
  where: "subject = ?" | "plugin = ?" | "1 = 1",
  arg?: string,
): Intent[] {
  const res = db.exec(
    `SELECT id, subject, method, plugin, key, params, sha256, instance, pgid, writer_pid, writer_start, resolver_pid, resolver_start, written_at
     FROM intents WHERE ${where} ORDER BY id`,
    arg === undefined ? [] : [arg],
  );
  return (res[0]?.values ?? []).map((r) => ({
    id: Number(r[0]),
    subject: String(r[1]),
    method: String(r[2]),
    plugin: String(r[3]),
    key: String(r[4]),
    params: JSON.parse(String(r[5])) as Record<string, unknown>,
    sha256: String(r[6]),
    instance: String(r[7]),
    pgid: Number(r[8]),
    writer: { pid: Number(r[9]), start: String(r[10]) },
    resolver: r[11] === null ? null : { pid: Number(r[11]), start: String(r[12]) },
    writtenAt: Number(r[13]),
  }));
}

/** Marks who resolves an intent, so a second resolver knows to wait. */
export function markResolver(db: Database, i: IntentRef, who: ProcessId): void {
  db.run("UPDATE intents SET resolver_pid = ?, resolver_start = ? WHERE id = ? AND key = ?", [
    who.pid,
    who.start,
    i.id,
    i.key,
  ]);
}

export function setIntentGroup(db: Database, i: IntentRef, pgid: number): void {
  db.run("UPDATE intents SET pgid = ? WHERE id = ? AND key = ?", [pgid, i.id, i.key]);
}

export function allIntents(db: Database): { subject: string; method: string; key: string }[] {
  return (db.exec("SELECT subject, method, key FROM intents ORDER BY id")[0]?.values ?? []).map(
    (r) => ({
      subject: String(r[0]),
      method: String(r[1]),
      key: String(r[2]),
    }),
  );
}

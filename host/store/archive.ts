import { basename, dirname } from "node:path";
import { crashPoint } from "../crash-point.js";
import type { Ports } from "../ports/types.js";
import { removeDeadTemps, replaceDurably } from "./durable.js";

// The archive: rows retention moved out of the database, as numbered JSON
// Lines segments beside it (`mu.db.archive-<id>-000001.jsonl`, ...). Each segment
// is written once, whole, by the same rename-and-fsync as the database, and
// the database names the last segment it vouches for (retention.archive_seq).
// A segment numbered above that belongs to a pass that crashed before its
// database commit: its rows are still in the database, so readers skip it
// and the next pass writes the same number over it. That is what keeps a
// moved row from being lost or counted twice, whatever the crash. The id
// is the database's own, drawn and committed by its first pass, which moves
// nothing: a segment is written only under an id the database already
// holds, so a crashed pass's segment is written over by the next, never
// left beside a second copy under another id. A database started afresh at
// the same path numbers its segments from 1 again without writing over the
// ones a database before it left.

export interface ArchivedReceipt {
  table: "receipts";
  msgId: string;
  workstream: string;
  agent: string;
  state: string;
  createdAt: number;
}

export function segmentPath(dbPath: string, id: string, seq: number): string {
  return `${dbPath}.archive-${id}-${String(seq).padStart(6, "0")}.jsonl`;
}

/** The glob a person can use to find every segment. */
export function segmentGlob(dbPath: string): string {
  return `${dbPath}.archive-*.jsonl`;
}

/** Whether any segment is on disk, so a hint names the archive only when there is one to look in. */
export async function hasSegments(ports: Ports, dbPath: string): Promise<boolean> {
  const prefix = `${basename(dbPath)}.archive-`;
  const files = await ports.fs.readdir(dirname(dbPath)).catch(() => [] as string[]);
  return files.some((f) => f.startsWith(prefix) && f.endsWith(".jsonl"));
}

export async function writeSegment(
  ports: Ports,
  dbPath: string,
  id: string,
  seq: number,
  rows: readonly ArchivedReceipt[],
): Promise<void> {
  const text = rows.map((r) => `${JSON.stringify(r)}\n`).join("");
  await replaceDurably(
    ports,
    segmentPath(dbPath, id, seq),
    Buffer.from(text, "utf8"),
    "archive.before-rename",
  );
  await crashPoint("archive.written", ports);
}

/**
 * Temp files of segments whose writer died before the rename: no name
 * vouches for them, and the pass that would write over them may never
 * come (nothing left to move, or a later number), so each pass removes them.
 */
export async function removeDeadSegmentTemps(ports: Ports, dbPath: string): Promise<void> {
  const prefix = `${basename(dbPath)}.archive-`;
  await removeDeadTemps(ports, dirname(dbPath), (file) => file.startsWith(prefix));
}

/**
 * Every row in segments 1..upTo, oldest segment first. A segment a person
 * deleted is simply absent: nothing in the archive is owed anything.
 */
export async function readArchive(
  ports: Ports,
  dbPath: string,
  id: string | null,
  upTo: number,
): Promise<ArchivedReceipt[]> {
  const out: ArchivedReceipt[] = [];
  for (let seq = 1; id !== null && seq <= upTo; seq++) {
    const bytes = await ports.fs.readFile(segmentPath(dbPath, id, seq));
    if (bytes === null) continue;
    for (const line of Buffer.from(bytes).toString("utf8").split("\n")) {
      if (line !== "") out.push(JSON.parse(line) as ArchivedReceipt);
    }
  }
  return out;
}

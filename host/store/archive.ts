import type { Ports } from "../ports/types.js";
import { replaceDurably } from "./durable.js";

// The archive: rows retention moved out of the database, as numbered JSON
// Lines segments beside it (`mu.db.archive-<id>-000001.jsonl`, ...). Each segment
// is written once, whole, by the same rename-and-fsync as the database, and
// the database names the last segment it vouches for (retention.archive_seq).
// A segment numbered above that belongs to a pass that crashed before its
// database commit: its rows are still in the database, so readers skip it
// and the next pass writes the same number over it. That is what keeps a
// moved row from being lost or counted twice, whatever the crash. The id
// is the database's own, drawn at its first pass: a database started afresh
// at the same path numbers its segments from 1 again without writing over
// the ones a database before it left.

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

export async function writeSegment(
  ports: Ports,
  dbPath: string,
  id: string,
  seq: number,
  rows: readonly ArchivedReceipt[],
): Promise<void> {
  const text = rows.map((r) => `${JSON.stringify(r)}\n`).join("");
  await replaceDurably(ports, segmentPath(dbPath, id, seq), Buffer.from(text, "utf8"));
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

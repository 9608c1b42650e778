import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { CrashPointName } from "../host/crash-point.js";
import { MIGRATIONS } from "../host/store/migrations.js";
import { sqlJs } from "../host/store/sqljs.js";
import { muProcess, tempState } from "./helpers.js";

// The real mu binary killed at each step of a retention pass (the archive
// segment's temp file written, the segment in place, the database's temp
// written), in the database's very first moving pass and in a later one.
// Whatever the cut, the files beside the database end up with one archive
// id, no temp file, and every receipt in exactly one place.

const DAY = 86_400_000;
let state: ReturnType<typeof tempState>;
beforeEach(() => {
  state = tempState();
});
afterEach(() => state.done());

const OLD = Array.from({ length: 30 }, (_, i) => `send-gone-${String(i).padStart(2, "0")}`);
const OWED = ["send-gone-sending", "send-gone-recent"];

/** Today's schema, never retained: two receipts retention must keep. */
async function crewDb(path: string): Promise<void> {
  const SQL = await sqlJs();
  const db = new SQL.Database();
  for (const m of MIGRATIONS) db.exec(m);
  db.exec(`PRAGMA user_version = ${MIGRATIONS.length}`);
  writeFileSync(path, db.export());
  db.close();
  await addReceipts(path, [
    ["send-gone-sending", "sending", 60],
    ["send-gone-recent", "accepted", 1],
  ]);
}

/** Receipts of an agent with no job and no intent, written while no mu runs. */
async function addReceipts(path: string, rows: [string, string, number][]): Promise<void> {
  const SQL = await sqlJs();
  const db = new SQL.Database(readFileSync(path));
  for (const [id, st, days] of rows)
    db.run(
      "INSERT INTO receipts (msg_id, workstream, agent, state, created_at) VALUES (?, 'w', 'gone', ?, ?)",
      [id, st, Date.now() - days * DAY],
    );
  writeFileSync(path, db.export());
  db.close();
}

const settled = (ids: string[]): [string, string, number][] =>
  ids.map((id, i) => [id, "accepted", 60 - i]);

interface Holdings {
  hot: string[];
  archiveId: string | null;
  archiveSeq: number;
  /** Every segment file beside the database, vouched for or not. */
  segments: { id: string; seq: number; msgIds: string[] }[];
  temps: string[];
}

async function holdings(): Promise<Holdings> {
  const SQL = await sqlJs();
  const db = new SQL.Database(readFileSync(join(state.dir, "mu.db")));
  try {
    const hot = (db.exec("SELECT msg_id FROM receipts")[0]?.values ?? []).map((r) => String(r[0]));
    const r = db.exec("SELECT archive_id, archive_seq FROM retention")[0]?.values[0] ?? [];
    const names = readdirSync(state.dir);
    const segments = names.flatMap((n) => {
      const m = /^mu\.db\.archive-([0-9a-f]+)-(\d{6})\.jsonl$/.exec(n);
      if (!m) return [];
      const msgIds = readFileSync(join(state.dir, n), "utf8")
        .split("\n")
        .filter(Boolean)
        .map((l) => (JSON.parse(l) as { msgId: string }).msgId);
      return [{ id: String(m[1]), seq: Number(m[2]), msgIds }];
    });
    return {
      hot,
      archiveId: r[0] === null || r[0] === undefined ? null : String(r[0]),
      archiveSeq: Number(r[1] ?? 0),
      segments,
      temps: names.filter((n) => n.includes(".tmp-")),
    };
  } finally {
    db.close();
  }
}

let tasks = 0;
const commit = (env: Record<string, string> = {}) =>
  // A pass at every commit, so each step below is one.
  muProcess(["task", "add", `t${tasks++}`], { ...state.env, MU_RETAIN_EVERY_MS: "0", ...env });

describe("a retention pass cut at each of its steps", () => {
  // After no whole commit the cut pass is the database's first that moves
  // rows; after two, a later one (the first commit may only draw the id).
  const cases: [CrashPointName, number][] = [];
  for (const point of ["archive.before-rename", "archive.written", "store.before-rename"] as const)
    for (const cleanFirst of [0, 2]) cases.push([point, cleanFirst]);

  it.each(cases)(
    "MU_CRASH_AT=%s after %i whole commits: one archive id, no temp file, each receipt in one place",
    async (point, cleanFirst) => {
      const path = join(state.dir, "mu.db");
      await crewDb(path);
      await addReceipts(path, settled(OLD.slice(0, 15)));
      for (let i = 0; i < cleanFirst; i++) expect(commit().code).toBe(0);
      // Rows for the cut pass to move, whatever the commits before moved.
      await addReceipts(path, settled(OLD.slice(15)));
      // The archive's points fire only in a commit that writes a segment.
      let crashed = false;
      for (let i = 0; i < 3 && !crashed; i++) {
        const r = commit({ MU_CRASH_AT: point });
        crashed = r.signal === "SIGKILL";
        if (!crashed) expect(r.code, r.stderr).toBe(0);
      }
      expect(crashed, "the crash point fired").toBe(true);

      // The next pass has nothing old enough to move, yet leaves nothing behind.
      expect(commit({ MU_RETAIN_AFTER_MS: String(10_000 * DAY) }).code).toBe(0);
      const mid = await holdings();
      expect(mid.temps, "a temp file left").toEqual([]);
      for (const s of mid.segments)
        for (const id of s.msgIds)
          expect(mid.hot, `${id} in a segment and the database`).not.toContain(id);

      // Two ordinary commits: the one that may draw the id, the one that moves.
      expect(commit().code).toBe(0);
      expect(commit().code).toBe(0);
      const end = await holdings();
      expect(end.temps, "a temp file left").toEqual([]);
      expect([...new Set(end.segments.map((s) => s.id))]).toEqual([end.archiveId]);
      for (const s of end.segments)
        expect(s.seq, "a segment the database does not vouch for").toBeLessThanOrEqual(
          end.archiveSeq,
        );
      const cold = end.segments.flatMap((s) => s.msgIds);
      expect(new Set(cold).size, "a receipt archived twice").toBe(cold.length);
      expect([...cold].sort()).toEqual(OLD);
      expect([...end.hot].sort()).toEqual([...OWED].sort());
    },
    60_000,
  );
});

import { readdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MIGRATIONS } from "../host/store/migrations.js";
import { sqlJs } from "../host/store/sqljs.js";
import { muProcess, tempState } from "./helpers.js";

// A database as today's main leaves it (schema 4, no retention table), with
// a long-lived crew's leftovers, driven through the real mu binary: it opens
// and migrates, the first writes run the retention pass, and `mu state`
// reports the same owed things before and after, plus one line saying what
// was archived and where (docs/cli.md "Where state lives").

const DAY = 86_400_000;
let state: ReturnType<typeof tempState>;
beforeEach(() => {
  state = tempState();
});
afterEach(() => state.done());

async function schema4Db(path: string): Promise<void> {
  const SQL = await sqlJs();
  const db = new SQL.Database();
  for (const m of MIGRATIONS.slice(0, 4)) db.exec(m);
  db.exec("PRAGMA user_version = 4");
  const now = Date.now();
  const job = (agent: string, state: string, owes: number, at: number) =>
    db.run(
      "INSERT INTO jobs (key, workstream, agent, host, plugin, instance, kind, view_kind, state, spec, owes_collect, created_at, updated_at) VALUES (?, 'w', ?, 'h', 'p', 'i', 'k', 'detached', ?, '{}', ?, ?, ?)",
      [`k-${agent}`, agent, state, owes, at, at],
    );
  const receipt = (id: string, agent: string, st: string, at: number) =>
    db.run(
      "INSERT INTO receipts (msg_id, workstream, agent, state, created_at) VALUES (?, 'w', ?, ?, ?)",
      [id, agent, st, at],
    );
  job("live", "running", 0, now - 30 * DAY);
  job("owing", "stopped", 1, now - 30 * DAY);
  db.run(
    "INSERT INTO agents (workstream, name, incarnation, job_key, host, channel_plugin, channel, state, created_at) VALUES ('w', 'live', 3, 'k-live', 'h', 'p', 'c', 'live', ?)",
    [now - 30 * DAY],
  );
  db.run(
    "INSERT INTO intents (subject, method, plugin, key, params, sha256, instance, pgid, writer_pid, writer_start, written_at) VALUES ('agent:w/pend', 'job.stop', 'p', 'key-1', '{}', 'x', 'i', 1, 1, 's', ?)",
    [now - 40 * DAY],
  );
  // The live job's own deliveries, one of them unknown: mu state lists that one.
  receipt("send-live-1", "live", "accepted", now - 20 * DAY);
  receipt("send-live-2", "live", "unknown", now - 19 * DAY);
  // Owed: a pending intent's agent, and a delivery still sending.
  receipt("send-pend-1", "pend", "accepted", now - 50 * DAY);
  receipt("send-gone-9", "gone", "sending", now - 50 * DAY);
  // Nothing depends on these: an ended job's settled deliveries, old, and a recent one.
  receipt("send-gone-1", "gone", "accepted", now - 60 * DAY);
  receipt("send-gone-2", "gone", "unknown", now - 59 * DAY);
  receipt("send-live-0", "live", "accepted", now - 31 * DAY);
  receipt("send-gone-3", "gone", "accepted", now - DAY);
  db.run("INSERT INTO tasks (id, state, claimed_by, created_at) VALUES ('t1', 'open', NULL, 0)");
  writeFileSync(path, db.export());
  db.close();
}

/** Every statement's rows, read straight from the file. */
const dump = async (path: string, sql: string) => {
  const SQL = await sqlJs();
  const db = new SQL.Database(readFileSync(path));
  try {
    return db.exec(sql).map((r) => r.values);
  } finally {
    db.close();
  }
};

describe("retention on a database from before it", () => {
  it("migrates it on the first write, archives only what nothing depends on, and mu state says the same", async () => {
    const path = join(state.dir, "mu.db");
    await schema4Db(path);
    const old = readFileSync(path);
    const owned = "SELECT * FROM jobs ORDER BY key; SELECT * FROM agents; SELECT * FROM intents";
    const ownedBefore = await dump(path, owned);
    expect(ownedBefore.map((rows) => rows.length)).toEqual([2, 1, 1]);

    const textBefore = muProcess(["state"], state.env);
    const jsonBefore = muProcess(["state", "--json"], state.env);
    expect(textBefore.code).toBe(0);
    expect(textBefore.stdout).toMatch(/^pending: job\.stop for agent:w\/pend/m);
    expect(textBefore.stdout).toMatch(/^owed: the final collect of agent:w\/owing/m);
    expect(textBefore.stdout).toMatch(/^unknown: .*\(send-live-2\)/m);
    // A read migrates in memory only.
    expect(readFileSync(path).equals(old)).toBe(true);

    const segments = () => readdirSync(state.dir).filter((n) => n.endsWith(".jsonl"));
    // The first write migrates and draws the archive's id, moving nothing:
    // no segment is ever written under an id the database has not kept.
    const add = muProcess(["task", "add", "t2"], state.env);
    expect(add.stderr).toBe("");
    expect(add.code).toBe(0);
    expect(await dump(path, "PRAGMA user_version")).toEqual([[[MIGRATIONS.length]]]);
    expect(await dump(path, "SELECT count(*) FROM receipts")).toEqual([[[8]]]);
    expect(await dump(path, "SELECT archive_id IS NOT NULL FROM retention")).toEqual([[[1]]]);
    expect(segments()).toEqual([]);
    // The next one moves.
    expect(muProcess(["task", "add", "t3"], state.env).code).toBe(0);

    expect(await dump(path, "SELECT id FROM tasks ORDER BY id")).toEqual([
      [["t1"], ["t2"], ["t3"]],
    ]);
    // A column a later migration added comes last, null in the rows written before it.
    const ownedAfter = await dump(path, owned);
    const width = (i: number) => ownedBefore[i]?.[0]?.length ?? 0;
    expect(ownedAfter.map((rows, i) => rows.map((r) => r.slice(0, width(i))))).toEqual(ownedBefore);
    expect(ownedAfter.flatMap((rows, i) => rows.flatMap((r) => r.slice(width(i))))).toEqual([
      null,
      null,
    ]);
    expect(await dump(path, "SELECT msg_id FROM receipts ORDER BY msg_id")).toEqual([
      [["send-gone-3"], ["send-gone-9"], ["send-live-1"], ["send-live-2"], ["send-pend-1"]],
    ]);
    const [first, ...more] = segments();
    expect(first).toMatch(/^mu\.db\.archive-[0-9a-f]{8}-000001\.jsonl$/);
    expect(more).toEqual([]);
    const segment = join(state.dir, String(first));
    const archived = readFileSync(segment, "utf8")
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as { msgId: string }).msgId);
    expect(archived).toEqual(["send-gone-1", "send-gone-2", "send-live-0"]);
    expect(readdirSync(state.dir).filter((n) => n.includes(".tmp-"))).toEqual([]);

    const jsonAfter = muProcess(["state", "--json"], state.env);
    expect(jsonAfter.stdout).toBe(jsonBefore.stdout);
    const textAfter = muProcess(["state"], state.env);
    expect(textAfter.stdout).toBe(
      `${textBefore.stdout}archived: 3 settled receipts of ended jobs, in ${path}.archive-*.jsonl (nothing there is owed)\n`,
    );

    // Moved aside and started afresh at the same path: the new database's
    // segment 1 is another file, and the old one is left as it was.
    const kept = readFileSync(segment);
    renameSync(path, `${path}.aside`);
    await schema4Db(path);
    expect(muProcess(["task", "add", "t4"], state.env).code).toBe(0);
    expect(muProcess(["task", "add", "t5"], state.env).code).toBe(0);
    expect(segments()).toHaveLength(2);
    expect(readFileSync(segment).equals(kept)).toBe(true);
  });
});

describe("retention's variables", () => {
  it("a bad MU_RETAIN_AFTER_MS is one usage line, exit 2, and no database is made", () => {
    const r = muProcess(["task", "add", "t1"], { ...state.env, MU_RETAIN_AFTER_MS: "a week" });
    expect(r.stderr).toBe(
      "mu: usage: MU_RETAIN_AFTER_MS='a week' is not valid; give a whole number of milliseconds from 0 to 10000000000000, in plain digits, e.g. MU_RETAIN_AFTER_MS=604800000\n",
    );
    expect(r.code).toBe(2);
    expect(readdirSync(state.dir)).toEqual([]);
  });
});

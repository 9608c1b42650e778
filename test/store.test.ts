import {
  existsSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { crc32 } from "../host/checksum.js";
import { realLiveness, realPorts } from "../host/ports/real.js";
import { type Database, dbPath, openStore, SCHEMA_VERSION } from "../host/store/index.js";
import { damage } from "../host/store/sqlite-file.js";
import { sqlJs } from "../host/store/sqljs.js";
import { vouchPath } from "../host/store/vouch.js";
import { muError } from "./helpers.js";

// The store in this process, on real files: one temp directory per test.

let dir: string;
let db: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mu-test-"));
  db = join(dir, "mu.db");
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const store = (extra: Record<string, string> = {}) =>
  openStore(realPorts({ PATH: process.env.PATH ?? "", MU_DB_PATH: db, ...extra }));
const ids = () =>
  store().read((d) =>
    (d.exec("SELECT id FROM tasks ORDER BY id")[0]?.values ?? []).map((r) => String(r[0])),
  );
const add = (id: string, extra: Record<string, string> = {}) =>
  store(extra).write((d) =>
    d.run("INSERT INTO tasks (id, state, claimed_by, created_at) VALUES (?, 'open', NULL, 0)", [
      id,
    ]),
  );

const failure = muError;

describe("location", () => {
  it("is MU_DB_PATH, else MU_STATE_DIR/mu.db, else HOME/.local/state/mu/mu.db", () => {
    const all = { MU_DB_PATH: "/a/x.db", MU_STATE_DIR: "/b", HOME: "/h" };
    expect(dbPath(all)).toBe("/a/x.db");
    expect(dbPath({ ...all, MU_DB_PATH: "" })).toBe("/b/mu.db");
    expect(dbPath({ MU_STATE_DIR: "/b", HOME: "/h" })).toBe("/b/mu.db");
    expect(dbPath({ HOME: "/h" })).toBe("/h/.local/state/mu/mu.db");
  });

  it("falls back to the real home, which a test run may not touch", () => {
    const real = join(homedir(), ".local/state/mu/mu.db");
    expect(() => dbPath({})).toThrow(`refusing the real mu database ${real} under a test run`);
    expect(() => dbPath({ HOME: homedir() })).toThrow(/refusing the real mu database/);
  });

  it("creates the directory 0700 on the first write, not on a read", async () => {
    db = join(dir, "state", "deeper", "mu.db");
    expect(await ids()).toEqual([]);
    expect(existsSync(join(dir, "state"))).toBe(false);
    await add("a");
    const { statSync } = await import("node:fs");
    expect(statSync(join(dir, "state", "deeper")).mode & 0o777).toBe(0o700);
    expect(statSync(db).mode & 0o777).toBe(0o600);
    expect(await ids()).toEqual(["a"]);
  });
});

describe("schema", () => {
  it("migrates a fresh DB to the current schema on the first write", async () => {
    await add("a");
    const { version, tables } = await store().read((d) => ({
      version: d.exec("PRAGMA user_version")[0]?.values[0]?.[0],
      tables: d.exec("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name")[0]
        ?.values,
    }));
    expect(version).toBe(SCHEMA_VERSION);
    expect(tables).toEqual([
      ["agents"],
      ["deadline_events"],
      ["host_profiles"],
      ["hosts"],
      ["intents"],
      ["jobs"],
      ["plugins"],
      ["receipts"],
      ["retention"],
      ["tasks"],
      ["trees_left"],
    ]);
  });

  it("reads a missing DB as empty at the current schema and creates nothing", async () => {
    expect(await ids()).toEqual([]);
    expect(existsSync(db)).toBe(false);
    expect(existsSync(`${db}.lock`)).toBe(false);
  });

  it("migrates an old DB in memory on a read and writes it only on a write", async () => {
    await store().write((d) =>
      d.run(
        "DROP TABLE trees_left; DROP TABLE retention; DROP TABLE deadline_events; DROP TABLE receipts; DROP TABLE agents; DROP TABLE jobs; DROP TABLE host_profiles; DROP TABLE intents; DROP TABLE hosts; DROP TABLE tasks; DROP TABLE plugins; PRAGMA user_version = 0",
      ),
    );
    const old = readFileSync(db);
    expect(await ids()).toEqual([]);
    expect(readFileSync(db).equals(old)).toBe(true);
    await add("a");
    expect(await ids()).toEqual(["a"]);
  });

  it("refuses a DB from a newer mu, for reads and writes, and leaves it alone", async () => {
    await add("a");
    await store().write((d) => d.run(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`));
    const bytes = readFileSync(db);
    const w = await failure(add("b"));
    expect([w.code, w.exit]).toEqual(["store.newer", 5]);
    expect(w.line()).toBe(
      `mu: store: database ${db} was written by a newer mu (schema ${SCHEMA_VERSION + 1}, this mu knows ${SCHEMA_VERSION}); upgrade mu; it never migrates a database backwards`,
    );
    expect((await failure(ids())).code).toBe("store.newer");
    expect(readFileSync(db).equals(bytes)).toBe(true);
  });
});

describe("transactions", () => {
  it("a throwing write commits nothing", async () => {
    await add("a");
    const before = readFileSync(db);
    await expect(
      store().write((d) => {
        d.run(
          "INSERT INTO tasks (id, state, claimed_by, created_at) VALUES ('b', 'open', NULL, 0)",
        );
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(readFileSync(db).equals(before)).toBe(true);
    expect(existsSync(`${db}.lock`)).toBe(false);
  });

  it("a throwing first write creates no DB", async () => {
    await expect(
      store().write(() => {
        throw new Error("no");
      }),
    ).rejects.toThrow("no");
    expect(existsSync(db)).toBe(false);
  });

  it("refuses an async fn, whose work would outlive the transaction", async () => {
    await expect(store().write(async () => {})).rejects.toThrow(/synchronous/);
    expect(existsSync(db)).toBe(false);
  });

  it("returns fn's value", async () => {
    expect(await store().write(() => 42)).toBe(42);
    expect(await store().read(() => "x")).toBe("x");
  });

  it("a guarded write checks on the state it commits onto, and a refusing guard commits nothing", async () => {
    await add("a");
    // Another writer's commit lands between this verb's read and its write.
    const seen = await store().read((d) => d.exec("SELECT id FROM tasks")[0]?.values.length);
    expect(seen).toBe(1);
    await add("b");
    const before = readFileSync(db);
    const onlyOne = (d: Database) => {
      const n = d.exec("SELECT count(*) FROM tasks")[0]?.values[0]?.[0];
      if (n !== 1) throw new Error(`${n} tasks now`);
    };
    let ran = false;
    await expect(
      store().guarded([onlyOne], () => {
        ran = true;
      }),
    ).rejects.toThrow("2 tasks now");
    expect(ran).toBe(false);
    expect(readFileSync(db).equals(before)).toBe(true);
    expect(await store().guarded([], () => 7)).toBe(7);
  });
});

describe("damaged files are reported in one line and never written", () => {
  const cases: [string, (b: Buffer) => void][] = [
    ["truncated to half", (b) => truncateSync(db, b.length / 2)],
    ["truncated off a page boundary", (b) => truncateSync(db, b.length - 100)],
    ["cut inside the header", () => truncateSync(db, 50)],
    ["garbage", (b) => writeFileSync(db, Buffer.alloc(b.length, 0x41))],
    ["empty", () => writeFileSync(db, "")],
    ["an interior page overwritten", (b) => writeFileSync(db, smashPage(b, 2))],
  ];
  it.each(cases)("%s", async (_what, harm) => {
    for (let i = 0; i < 40; i++) await add(`task-${i}-${"x".repeat(200)}`);
    harm(readFileSync(db));
    const damaged = readFileSync(db);
    const r = await failure(ids());
    expect([r.code, r.exit]).toEqual(["store.corrupt", 5]);
    expect(r.line()).toMatch(
      new RegExp(
        `^mu: store: ${db} is not a valid mu database \\(truncated or corrupt: [^\\n]+\\); move it aside or restore it from a backup; mu will not overwrite it$`,
      ),
    );
    expect((await failure(add("c"))).code).toBe("store.corrupt");
    expect(readFileSync(db).equals(damaged)).toBe(true);
    expect(existsSync(`${db}.lock`)).toBe(false);
  });

  it("the header check names what is wrong", async () => {
    await add("a");
    const good = readFileSync(db);
    expect(damage(good)).toBeNull();
    const pageSize = good.readUInt16BE(16);
    const lying = Buffer.from(good);
    lying.writeUInt32BE(good.length / pageSize + 1, 28);
    expect(damage(lying)).toMatch(/header says/);
    const stale = Buffer.from(lying);
    stale.writeUInt32BE(stale.readUInt32BE(24) + 1, 92);
    // The count is not trusted when another commit wrote it.
    expect(damage(stale)).toBeNull();
    const badSize = Buffer.from(good);
    badSize.writeUInt16BE(1000, 16);
    expect(damage(badSize)).toMatch(/page size/);
  });
});

// A verb opens the file several times; bytes already checked, or
// committed by this very process, are not checked again.
describe("quick_check", () => {
  /** Runs fn with every quick_check counted; `checks()` reads the count so far. */
  const counting = async (fn: (checks: () => number) => Promise<void>) => {
    const SQL = await sqlJs();
    const exec = SQL.Database.prototype.exec;
    let n = 0;
    SQL.Database.prototype.exec = function (this: InstanceType<typeof SQL.Database>, sql, params) {
      if (/quick_check/.test(sql)) n++;
      return exec.call(this, sql, params);
    };
    try {
      await fn(() => n);
    } finally {
      SQL.Database.prototype.exec = exec;
    }
  };
  /** The file's rows rewritten as another writer's commit leaves them: bytes this process never saw. */
  const rewritten = () => {
    const b = readFileSync(db);
    b.writeUInt32BE(b.readUInt32BE(24) + 1, 24);
    b.writeUInt32BE(b.readUInt32BE(24), 92);
    return b;
  };

  it("runs once per distinct file content, and again whenever the bytes change", () =>
    counting(async (checks) => {
      await add("a");
      await add("b");
      expect(await ids()).toEqual(["a", "b"]);
      expect(await ids()).toEqual(["a", "b"]);
      // Every byte read so far was committed by this process.
      expect(checks()).toBe(0);
      // Another writer's bytes (here: the same rows, rewritten) are checked, once.
      writeFileSync(db, rewritten());
      expect(await ids()).toEqual(["a", "b"]);
      expect(await ids()).toEqual(["a", "b"]);
      expect(checks()).toBe(1);
    }));

  it("skips bytes the last commit's note names (another mu's commit), and checks any other", () =>
    counting(async (checks) => {
      const note = (b: Buffer) => `${crc32(b)} ${b.length}\n`;
      await add("a");
      expect(readFileSync(vouchPath(db), "latin1")).toBe(note(readFileSync(db)));
      const theirs = rewritten();
      writeFileSync(db, theirs);
      writeFileSync(vouchPath(db), note(theirs));
      expect(await ids()).toEqual(["a"]);
      expect(checks()).toBe(0);
      // Changed after the note: the note is stale, so the check runs.
      writeFileSync(db, rewritten());
      expect(await ids()).toEqual(["a"]);
      expect(checks()).toBe(1);
      // A torn or foreign note is no vouch either.
      writeFileSync(db, rewritten());
      writeFileSync(vouchPath(db), "12");
      expect(await ids()).toEqual(["a"]);
      expect(checks()).toBe(2);
    }));
});

// The connection an open made is handed out again while the file
// still holds the bytes it holds; what it serves must be the file's state.
describe("the kept connection", () => {
  it("is reused while the bytes stay the same, and never serves a read's own changes", async () => {
    const SQL = await sqlJs();
    const Original = SQL.Database;
    let loads = 0;
    SQL.Database = class extends Original {
      constructor(...args: ConstructorParameters<typeof Original>) {
        super(...args);
        loads++;
      }
    };
    try {
      await add("a");
      // The first commit came from no file; reading it back loads it once.
      expect(await ids()).toEqual(["a"]);
      loads = 0;
      const sneaky = await store().read((d) => {
        d.run(
          "INSERT INTO tasks (id, state, claimed_by, created_at) VALUES ('x', 'open', NULL, 0)",
        );
        return d.exec("SELECT COUNT(*) FROM tasks")[0]?.values[0]?.[0];
      });
      expect(sneaky).toBe(2);
      expect(await ids()).toEqual(["a"]);
      await add("b");
      expect(await ids()).toEqual(["a", "b"]);
      expect(loads).toBe(0);
    } finally {
      SQL.Database = Original;
    }
  });

  it("sees another writer's commit", async () => {
    await add("a");
    expect(await ids()).toEqual(["a"]);
    const SQL = await sqlJs();
    const other = new SQL.Database(readFileSync(db));
    other.run(
      "INSERT INTO tasks (id, state, claimed_by, created_at) VALUES ('z', 'open', NULL, 0)",
    );
    writeFileSync(db, other.export());
    other.close();
    expect(await ids()).toEqual(["a", "z"]);
  });

  it("is dropped when its commit did not reach the disk", async () => {
    await add("a");
    const ports = realPorts({ PATH: process.env.PATH ?? "", MU_DB_PATH: db });
    const broken = openStore({
      ...ports,
      fs: { ...ports.fs, rename: () => Promise.reject(new Error("EIO: the disk said no")) },
    });
    await expect(
      broken.write((d) =>
        d.run(
          "INSERT INTO tasks (id, state, claimed_by, created_at) VALUES ('b', 'open', NULL, 0)",
        ),
      ),
    ).rejects.toThrow(/EIO/);
    expect(await ids()).toEqual(["a"]);
  });
});

function smashPage(b: Buffer, page: number): Buffer {
  const size = b.readUInt16BE(16);
  const out = Buffer.from(b);
  out.fill(0x41, (page - 1) * size, page * size);
  return out;
}

describe("the lock", () => {
  it("recovers a lock whose holder is dead, or whose pid now names another process", async () => {
    writeFileSync(`${db}.lock`, JSON.stringify({ pid: 999_999_999, start: "1" }));
    await add("a");
    writeFileSync(`${db}.lock`, JSON.stringify({ pid: process.pid, start: "not-my-start" }));
    await add("b");
    expect(await ids()).toEqual(["a", "b"]);
    expect(existsSync(`${db}.lock`)).toBe(false);
  });

  it("recovers a half-written lock file, and a recoverer's break file left by a dead one", async () => {
    writeFileSync(`${db}.lock`, "{");
    await add("a");
    writeFileSync(`${db}.lock`, JSON.stringify({ pid: 999_999_999, start: "1" }));
    writeFileSync(`${db}.lock.break`, JSON.stringify({ pid: 999_999_998, start: "1" }));
    await add("b");
    writeFileSync(`${db}.lock`, "");
    writeFileSync(`${db}.lock.break`, "");
    await add("c");
    expect(await ids()).toEqual(["a", "b", "c"]);
    expect(existsSync(`${db}.lock`) || existsSync(`${db}.lock.break`)).toBe(false);
  });

  it("waits for a live holder, then fails with exit 5 naming it and the lock", async () => {
    await add("a");
    const before = readFileSync(db);
    const me = realLiveness.self();
    writeFileSync(`${db}.lock`, JSON.stringify(me));
    const e = await failure(add("b", { MU_LOCK_TIMEOUT_MS: "200" }));
    expect([e.code, e.exit]).toEqual(["store.locked", 5]);
    expect(e.line()).toBe(
      `mu: store: the database lock ${db}.lock is held by pid ${me.pid} (waited 200 ms); let that mu finish and retry, or raise MU_LOCK_TIMEOUT_MS`,
    );
    // The holder's lock is its own to remove; a read needs none.
    expect(readFileSync(`${db}.lock`, "utf8")).toBe(JSON.stringify(me));
    expect(await ids()).toEqual(["a"]);
    expect(readFileSync(db).equals(before)).toBe(true);
  });

  it("serialises concurrent writes inside one process", async () => {
    await Promise.all(Array.from({ length: 20 }, (_, i) => add(`t${String(i).padStart(2, "0")}`)));
    expect(await ids()).toHaveLength(20);
  });

  it("refuses a MU_LOCK_TIMEOUT_MS that is not a number with exit 2", async () => {
    const e = await failure(add("a", { MU_LOCK_TIMEOUT_MS: "soon" }));
    expect([e.code, e.exit]).toEqual(["env.ms", 2]);
    expect(e.line()).toMatch(
      /^mu: usage: MU_LOCK_TIMEOUT_MS=.soon. is not valid; give a whole number of milliseconds from 0 to/,
    );
  });
});

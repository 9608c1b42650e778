import { spawn, spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MuError } from "../host/errors.js";
import { packageRoot } from "../host/package-root.js";
import { realPorts } from "../host/ports/real.js";
import { dbPath, openStore } from "../host/store/index.js";
import { SCHEMA_VERSION } from "../host/store/migrations.js";
import { tempState } from "./helpers.js";

let state: ReturnType<typeof tempState>;
let db: string;
const fixture = (f: string) => join(packageRoot(), "test/fixtures", f);
const env = () => ({ PATH: process.env.PATH ?? "", MU_DB_PATH: db });
const store = (extra: Record<string, string> = {}) => openStore(realPorts({ ...env(), ...extra }));

beforeEach(() => {
  state = tempState();
  db = join(state.dir, "mu.db");
});
afterEach(() => state.done());

const ids = () =>
  store().read((d) =>
    (d.exec("SELECT id FROM tasks ORDER BY id")[0]?.values ?? []).map((r) => String(r[0])),
  );
const add = (id: string) =>
  store().write((d) =>
    d.run("INSERT INTO tasks (id, state, claimed_by, created_at) VALUES (?, 'open', NULL, 0)", [
      id,
    ]),
  );

function writer(prefix: string, count: number, extra: Record<string, string> = {}) {
  return spawnSync(process.execPath, [fixture("store-writer.mjs"), prefix, String(count)], {
    env: { ...env(), ...extra },
  });
}

async function failure(p: Promise<unknown>): Promise<MuError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof MuError) return err;
    throw err;
  }
  throw new Error("expected a failure");
}

describe("location", () => {
  it("prefers MU_DB_PATH, then MU_STATE_DIR, then HOME", () => {
    expect(dbPath({ MU_DB_PATH: "/a/x.db", MU_STATE_DIR: "/b" })).toBe("/a/x.db");
    expect(dbPath({ MU_STATE_DIR: "/b", HOME: "/h" })).toBe("/b/mu.db");
    expect(() => dbPath({ HOME: "/h" })).toThrow(/refusing the real mu database under a test run/);
  });
});

describe("durability", () => {
  it("migrates a fresh DB to the current schema", async () => {
    await add("a");
    expect(await store().read((d) => d.exec("PRAGMA user_version")[0]?.values[0]?.[0])).toBe(
      SCHEMA_VERSION,
    );
  });

  it("a read of a missing DB creates nothing", async () => {
    expect(await ids()).toEqual([]);
    expect(existsSync(db)).toBe(false);
  });

  it("a throwing write commits nothing", async () => {
    await add("a");
    await expect(
      store().write((d) => {
        d.run(
          "INSERT INTO tasks (id, state, claimed_by, created_at) VALUES ('b', 'open', NULL, 0)",
        );
        throw new Error("changed my mind");
      }),
    ).rejects.toThrow("changed my mind");
    expect(await ids()).toEqual(["a"]);
  });

  it("SIGKILL between the temp write and the rename keeps the last committed state", async () => {
    expect(writer("first", 3).status).toBe(0);
    const before = readFileSync(db);
    const crashed = writer("second", 1, { MU_CRASH_AT: "store.before-rename" });
    expect(crashed.signal).toBe("SIGKILL");
    expect(readFileSync(db).equals(before)).toBe(true);
    expect(await ids()).toEqual(["first-0", "first-1", "first-2"]);
    // The dead writer's lock is recovered; its temp file is harmless litter.
    await add("after");
    expect(await ids()).toContain("after");
  });

  it("two processes committing 200 rows each lose none", async () => {
    const run = (prefix: string) =>
      new Promise<number | null>((resolve) => {
        const c = spawn(process.execPath, [fixture("store-writer.mjs"), prefix, "200"], {
          env: env(),
          stdio: "ignore",
        });
        c.on("exit", resolve);
      });
    expect(await Promise.all([run("a"), run("b")])).toEqual([0, 0]);
    const all = await ids();
    expect(all).toHaveLength(400);
    expect(all.filter((i) => i.startsWith("a-"))).toHaveLength(200);
    expect(readdirSync(state.dir).filter((f) => f !== "mu.db")).toEqual([]);
  });
});

describe("damaged files are reported and never written", () => {
  const cases: [string, (bytes: Buffer) => void][] = [
    ["truncated to half", (b) => truncateSync(db, Math.floor(b.length / 2))],
    ["truncated off a page boundary", (b) => truncateSync(db, b.length - 100)],
    ["garbage", (b) => writeFileSync(db, Buffer.alloc(b.length, 0x41))],
    ["empty", () => writeFileSync(db, "")],
  ];
  it.each(cases)("%s", async (_what, harm) => {
    await add("a");
    await add("b");
    harm(readFileSync(db));
    const damaged = readFileSync(db);
    const r = await failure(ids());
    expect(r.exit).toBe(5);
    expect(r.line()).toMatch(
      /^mu: store: .*mu\.db is not a valid mu database \(.+\); move it aside/,
    );
    expect((await failure(add("c"))).code).toBe("store.corrupt");
    expect(readFileSync(db).equals(damaged)).toBe(true);
  });

  it("a DB from a newer mu is refused and left alone", async () => {
    await add("a");
    await store().write((d) => d.run(`PRAGMA user_version = ${SCHEMA_VERSION + 1}`));
    const bytes = readFileSync(db);
    const r = await failure(add("b"));
    expect([r.code, r.exit]).toEqual(["store.newer", 5]);
    expect(r.message).toMatch(/written by a newer mu/);
    expect(readFileSync(db).equals(bytes)).toBe(true);
  });
});

describe("the lock", () => {
  it("recovers a lock whose holder is dead, or whose pid was reused", async () => {
    writeFileSync(`${db}.lock`, JSON.stringify({ pid: 999_999_999, start: "1" }));
    await add("a");
    // A live pid with another start time is someone else, not the holder.
    writeFileSync(`${db}.lock`, JSON.stringify({ pid: process.pid, start: "not-my-start" }));
    await add("b");
    expect(await ids()).toEqual(["a", "b"]);
    expect(existsSync(`${db}.lock`)).toBe(false);
  });

  it("recovers a half-written lock file", async () => {
    writeFileSync(`${db}.lock`, "{");
    await add("a");
    expect(await ids()).toEqual(["a"]);
  });

  it("waits for a live holder, then fails with exit 5", async () => {
    const holder = spawn(process.execPath, [fixture("store-holder.mjs")], {
      env: env(),
      stdio: ["ignore", "pipe", "inherit"],
    });
    try {
      await new Promise((r) => holder.stdout.once("data", r));
      const e = await failure(store({ MU_LOCK_TIMEOUT_MS: "300" }).write(() => {}));
      expect([e.code, e.exit]).toEqual(["store.locked", 5]);
      expect(e.message).toContain(`pid ${holder.pid}`);
    } finally {
      holder.kill("SIGKILL");
      await new Promise((r) => holder.once("exit", r));
    }
    // Once it is gone, its lock is recovered.
    await add("a");
    expect(await ids()).toEqual(["a"]);
  });
});

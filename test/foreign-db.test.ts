import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { MIGRATIONS, SCHEMA_VERSION } from "../host/store/migrations.js";
import { MU_APPLICATION_ID } from "../host/store/own-schema.js";
import { sqlJs } from "../host/store/sqljs.js";
import { muProcess, tempState } from "./helpers.js";

// Another program's SQLite file may well have a `plugins` table and a
// user_version of 1 or more. mu tells its own files by the application_id
// it writes, and files from before that mark by their whole set of tables
// and columns; the real binary refuses anything else in one line, exit 5,
// and leaves the file byte for byte as it was.

let state: ReturnType<typeof tempState>;
beforeEach(() => {
  state = tempState();
});
afterEach(() => state.done());

async function fileOf(sql: string): Promise<string> {
  const SQL = await sqlJs();
  const db = new SQL.Database();
  db.exec(sql);
  const path = join(state.dir, "some.db");
  writeFileSync(path, db.export());
  db.close();
  return path;
}

/** The header's application_id (offset 68, big-endian). */
const appId = (path: string) => readFileSync(path).readInt32BE(68);

const migrated = (n: number) =>
  `${MIGRATIONS.slice(0, n).join(";\n")}; PRAGMA user_version = ${n};`;

describe("another program's SQLite file", () => {
  it.each([
    [
      "its own plugins table at version 1",
      "CREATE TABLE plugins (id INTEGER PRIMARY KEY, url TEXT); INSERT INTO plugins (url) VALUES ('x'); PRAGMA user_version = 1;",
    ],
    [
      "its own plugins table at mu's current version",
      `CREATE TABLE plugins (id INTEGER PRIMARY KEY, url TEXT); PRAGMA user_version = ${SCHEMA_VERSION};`,
    ],
    [
      "mu's plugins table beside one of its own, at version 1",
      `${MIGRATIONS[0]}; CREATE TABLE notes (body TEXT); PRAGMA user_version = 1;`,
    ],
    [
      "all of mu's tables, but another program's application_id",
      `${migrated(SCHEMA_VERSION)} PRAGMA application_id = 1280655905;`,
    ],
  ])("%s is refused in one line (exit 5) by every verb and left untouched", async (_what, sql) => {
    const path = await fileOf(sql);
    const before = readFileSync(path);
    for (const args of [
      ["task", "add", "t1"],
      ["task", "list"],
      ["plugin", "list", "--json"],
      ["state"],
    ]) {
      const r = muProcess(args, { ...state.env, MU_DB_PATH: path });
      expect(r.stderr, args.join(" ")).toMatch(
        /^mu: store: [^\n]*some\.db is an SQLite database, but not mu's \([^\n]+\); point MU_DB_PATH or MU_STATE_DIR elsewhere; [^\n]*\n$/,
      );
      expect(r.code).toBe(5);
    }
    expect(readFileSync(path).equals(before)).toBe(true);
  });
});

describe("mu's own files", () => {
  it("a new database carries mu's application_id", () => {
    expect(muProcess(["task", "add", "t1"], state.env).code).toBe(0);
    expect(appId(join(state.dir, "mu.db"))).toBe(MU_APPLICATION_ID);
  });

  it.each(Array.from({ length: SCHEMA_VERSION }, (_, i) => i + 1))(
    "a file an earlier mu made at schema %i, before the mark, is taken, migrated and marked on a write",
    async (version) => {
      const path = await fileOf(migrated(version));
      expect(appId(path)).toBe(0);
      const list = muProcess(["task", "list"], { ...state.env, MU_DB_PATH: path });
      expect(list.stderr).toBe("");
      expect(list.code).toBe(0);
      const add = muProcess(["task", "add", "t1"], { ...state.env, MU_DB_PATH: path });
      expect(add.stderr).toBe("");
      expect(add.code).toBe(0);
      expect(appId(path)).toBe(MU_APPLICATION_ID);
      expect(muProcess(["task", "list"], { ...state.env, MU_DB_PATH: path }).stdout).toMatch(/t1/);
    },
  );
});

import type { Database, SqlJsStatic } from "sql.js";
import { MIGRATIONS, SCHEMA_VERSION } from "./migrations.js";

// How mu tells its own database from another program's SQLite file. A
// name and a number are too little: plenty of programs have a `plugins`
// table and a user_version of 1 or more. mu marks every file it writes with
// its application_id (the header field SQLite keeps for this), and a file
// made before the mark is mu's only if it holds exactly the tables, with
// exactly the columns, that mu's migrations make at its version. Migrating
// anything else would add mu's tables to that program's data.

/** "mu" and a 1: the application_id in the header of every database mu writes. */
export const MU_APPLICATION_ID = 0x6d750001;

function pragma(db: Database, name: string): number {
  return Number(db.exec(`PRAGMA ${name}`)[0]?.values[0]?.[0] ?? 0);
}

export const userVersion = (db: Database) => pragma(db, "user_version");
export const applicationId = (db: Database) => pragma(db, "application_id");

/** Each table's columns, in order; SQLite's own tables (sqlite_sequence) left out. */
function tablesOf(db: Database): Map<string, string[]> {
  const names = (
    db.exec(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name",
    )[0]?.values ?? []
  ).map((r) => String(r[0]));
  const out = new Map<string, string[]>();
  for (const n of names) {
    const cols = (db.exec(`SELECT name FROM pragma_table_info(?)`, [n])[0]?.values ?? []).map((r) =>
      String(r[0]),
    );
    out.set(n, cols);
  }
  return out;
}

const expected = new Map<number, Map<string, string[]>>();

/** The tables mu's migrations leave at `version`, worked out once per process. */
function expectedAt(SQL: SqlJsStatic, version: number): Map<string, string[]> {
  let t = expected.get(version);
  if (!t) {
    const db = new SQL.Database();
    try {
      for (let v = 0; v < version; v++) db.exec(MIGRATIONS[v] as string);
      t = tablesOf(db);
    } finally {
      db.close();
    }
    expected.set(version, t);
  }
  return t;
}

/** The first way the file's tables differ from mu's at `version`, or null. */
function schemaDiffers(SQL: SqlJsStatic, db: Database, version: number): string | null {
  const want = expectedAt(SQL, version);
  const got = tablesOf(db);
  for (const [name, cols] of want) {
    const have = got.get(name);
    if (!have) return `it has no table '${name}', which mu's schema ${version} has`;
    if (have.join(",") !== cols.join(",")) {
      return `its table '${name}' has other columns than mu's schema ${version}`;
    }
  }
  for (const name of got.keys()) {
    if (!want.has(name)) return `it has a table '${name}' mu never made`;
  }
  return null;
}

/** Why a readable SQLite file is not one of mu's, or null when it is (or is empty). */
export function notMine(SQL: SqlJsStatic, db: Database): string | null {
  const id = applicationId(db);
  if (id === MU_APPLICATION_ID) return null;
  if (id !== 0) return `it carries another program's application id (${id})`;
  const version = userVersion(db);
  if (version === 0) {
    const n = Number(db.exec("SELECT count(*) FROM sqlite_master")[0]?.values[0]?.[0] ?? 0);
    return n === 0 ? null : `it holds ${n} objects mu never made`;
  }
  // A later version than this mu knows, from a mu that did not mark its files
  // yet: the newer-schema refusal says more than a guess at its tables.
  if (version > SCHEMA_VERSION) {
    return tablesOf(db).has("plugins") ? null : "it has no table of mu's";
  }
  return schemaDiffers(SQL, db, version);
}

import type { Database, SqlJsStatic } from "sql.js";
import type { Ports } from "../ports/types.js";
import { corrupt, foreign, ioFailure, migrationFailed, newer } from "./failures.js";
import { MIGRATIONS, SCHEMA_VERSION } from "./migrations.js";
import { applicationId, MU_APPLICATION_ID, notMine, userVersion } from "./own-schema.js";
import { damage } from "./sqlite-file.js";
import { sqlJs } from "./sqljs.js";
import { vouchedOnDisk } from "./vouch.js";

/** quick_check reports over several lines ("*** in database main ***" first). */
function oneLine(err: unknown): string {
  const msg = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ").trim();
  return msg.length > 200 ? `${msg.slice(0, 200)}...` : msg;
}

// The bytes this process last saw pass quick_check, or last committed
// itself: the same bytes need no second look. A verb reads and writes the
// file several times (a spawn about six, a wait every poll), and comparing
// the bytes costs far less than the check.
let vouched: { path: string; bytes: Uint8Array } | undefined;

/** Records bytes just committed to `path` as known good. */
export function vouchFor(path: string, bytes: Uint8Array): void {
  vouched = { path, bytes };
}

const view = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

function alreadyChecked(path: string, bytes: Uint8Array): boolean {
  return vouched?.path === path && view(vouched.bytes).equals(view(bytes));
}

// One connection this process opened, handed back once done with, and the
// bytes it holds: a verb opens the file several times (a spawn about
// thirty), and while nobody else commits, the next open finds the same
// bytes. Handing the same connection out again skips loading the bytes into
// sql.js and parsing the schema, most of an open's cost. Its state always
// equals those bytes: a read's changes are rolled back, and a write's
// connection is kept only with the bytes it committed.
let kept: { path: string; bytes: Uint8Array; db: Database } | undefined;

/** A connection from openDb, and whether it may be kept once its user is done. */
export interface OpenDb {
  db: Database;
  /** The file's bytes it was opened from, when its state is exactly those bytes. */
  from: Uint8Array | null;
}

/**
 * Gives a connection from openDb back: kept (closing any older one) when
 * its state equals `bytes`, closed when that is null. The caller passes
 * bytes only at the schema openDb returned them at, so a kept connection is
 * what openDb would make of those bytes afresh.
 */
export function giveBack(path: string, db: Database, bytes: Uint8Array | null): void {
  if (bytes === null) {
    db.close();
    return;
  }
  if (kept && kept.db !== db) kept.db.close();
  kept = { path, bytes, db };
}

/**
 * The committed state at `path` as an in-memory database at the current
 * schema. A missing file is an empty database; migrations run in memory and
 * reach disk only if the caller commits. Whatever is refused here (damage, a
 * newer schema) has not been written and will not be.
 */
export async function openDb(ports: Ports, path: string): Promise<OpenDb> {
  const SQL = await sqlJs();
  const bytes = await ports.fs.readFile(path).catch((err: unknown) => {
    throw ioFailure(path, err, "read");
  });
  if (bytes === null && !freshImage)
    return { db: migrate(SQL, new SQL.Database(), path), from: null };
  const image = bytes ?? (freshImage as Uint8Array);
  if (kept && kept.path === path && view(kept.bytes).equals(view(image))) {
    const db = kept.db;
    kept = undefined;
    return { db, from: image };
  }
  if (bytes === null) return { db: new SQL.Database(image), from: image };
  const why = damage(bytes);
  if (why) throw corrupt(path, why);
  // Bytes this process or the last commit vouched for need no second look (vouch.ts).
  const sound = alreadyChecked(path, bytes) || (await vouchedOnDisk(ports, path, bytes));
  let db: Database | undefined;
  try {
    db = new SQL.Database(bytes);
    if (!sound) {
      const check = db.exec("PRAGMA quick_check")[0]?.values[0]?.[0];
      if (check !== "ok") throw new Error(String(check));
      vouchFor(path, bytes);
    }
  } catch (err) {
    db?.close();
    throw corrupt(path, `SQLite says: ${oneLine(err)}`);
  }
  // Bytes at the current schema and already marked are what the connection
  // holds once migrate() is done with it; anything else it changed.
  const current = userVersion(db) === SCHEMA_VERSION && applicationId(db) === MU_APPLICATION_ID;
  return { db: migrate(SQL, db, path), from: current ? bytes : null };
}

/** An empty database at the current schema, once keepFreshImage ran. */
let freshImage: Uint8Array | undefined;

/**
 * Makes every later open of a missing database start from one migrated
 * image instead of running the migrations again. For an engine that runs
 * many mu invocations in one process (the virtual engine); a mu process opens
 * once, so it never calls this.
 */
export async function keepFreshImage(): Promise<void> {
  if (freshImage) return;
  const SQL = await sqlJs();
  const db = migrate(SQL, new SQL.Database(), "(fresh image)");
  freshImage = db.export();
  db.close();
}

function migrate(SQL: SqlJsStatic, db: Database, path: string): Database {
  const why = notMine(SQL, db);
  if (why) {
    db.close();
    throw foreign(path, why);
  }
  const found = userVersion(db);
  if (found > SCHEMA_VERSION) {
    db.close();
    throw newer(path, found, SCHEMA_VERSION);
  }
  for (let v = found; v < SCHEMA_VERSION; v++) {
    try {
      db.exec(`BEGIN; ${MIGRATIONS[v]}; PRAGMA user_version = ${v + 1}; COMMIT;`);
    } catch (err) {
      db.close();
      throw migrationFailed(path, v + 1, err);
    }
  }
  // Marked as mu's on its next commit: from then on it is told from another
  // program's file by the header alone.
  if (applicationId(db) !== MU_APPLICATION_ID)
    db.exec(`PRAGMA application_id = ${MU_APPLICATION_ID}`);
  return db;
}

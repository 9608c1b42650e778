import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { setFlagsFromString } from "node:v8";
import type { Database, SqlJsStatic } from "sql.js";
import { MuError, UnavailableError } from "../errors.js";
import type { Ports } from "../ports/types.js";
import { writeDurably } from "./durable.js";
import { acquireLock } from "./lock.js";
import { MIGRATIONS, SCHEMA_VERSION } from "./migrations.js";
import { dbPath } from "./paths.js";
import { damage } from "./sqlite-file.js";

export type { Database } from "sql.js";
export { dbPath } from "./paths.js";

// sql.js keeps the whole database in memory; the file on disk is the truth
// between invocations. Every write re-reads the file under the lock, so
// concurrent mu processes never lose each other's commits.

let sql: Promise<SqlJsStatic> | undefined;

/** Loaded on first use only: verbs that need no DB never pay for the wasm. */
function sqlJs(): Promise<SqlJsStatic> {
  sql ??= (async () => {
    // An invocation runs a handful of small queries. Optimising the 700 KB
    // sql.js module in the background costs more than it ever saves, and V8
    // holds the process open at exit until that compile finishes (about
    // 200 ms here): baseline-compiled wasm is enough.
    setFlagsFromString("--liftoff-only");
    const require = createRequire(import.meta.url);
    const wasmBinary = readFileSync(require.resolve("sql.js/dist/sql-wasm.wasm"));
    const init = (await import("sql.js")).default;
    return init({
      wasmBinary: wasmBinary.buffer.slice(
        wasmBinary.byteOffset,
        wasmBinary.byteOffset + wasmBinary.byteLength,
      ) as ArrayBuffer,
    });
  })();
  return sql;
}

export interface Store {
  readonly path: string;
  /** Runs fn on the latest committed state; nothing fn does is kept. */
  read<T>(fn: (db: Database) => T): Promise<T>;
  /** Runs fn in a transaction under the lock and commits durably unless it throws. */
  write<T>(fn: (db: Database) => T): Promise<T>;
}

function corrupt(path: string, why: string): UnavailableError {
  return new UnavailableError(
    "store.corrupt",
    "store",
    `${path} is not a valid mu database (${why})`,
    {
      hint: "move it aside or restore it from a backup; mu will not overwrite it",
    },
  );
}

/** A filesystem failure (permissions, a full or read-only disk) as one line. */
function ioError(path: string, err: unknown): unknown {
  if (err instanceof MuError) return err;
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== "string") return err;
  return new UnavailableError("store.io", "store", `cannot write ${path} (${code})`, {
    hint: "check that its directory exists or can be created, is writable by you, and has space",
  });
}

function userVersion(db: Database): number {
  return Number(db.exec("PRAGMA user_version")[0]?.values[0]?.[0] ?? 0);
}

async function load(
  ports: Ports,
  path: string,
): Promise<{ db: Database; fresh: boolean; migrated: boolean }> {
  const SQL = await sqlJs();
  const bytes = await ports.fs.readFile(path);
  let db: Database;
  if (bytes === null) {
    db = new SQL.Database();
  } else {
    const why = damage(bytes);
    if (why) throw corrupt(path, why);
    try {
      db = new SQL.Database(bytes);
      const check = db.exec("PRAGMA quick_check")[0]?.values[0]?.[0];
      if (check !== "ok") throw new Error(String(check));
    } catch (err) {
      throw corrupt(path, `SQLite says: ${(err as Error).message.split("\n")[0]}`);
    }
  }
  const version = userVersion(db);
  if (version > SCHEMA_VERSION) {
    db.close();
    throw new UnavailableError(
      "store.newer",
      "store",
      `${path} was written by a newer mu (schema ${version}; this mu knows ${SCHEMA_VERSION})`,
      { hint: "upgrade mu; it will not migrate a database backwards" },
    );
  }
  for (let v = version; v < SCHEMA_VERSION; v++) {
    db.exec(`BEGIN; ${MIGRATIONS[v]}; PRAGMA user_version = ${v + 1}; COMMIT;`);
  }
  return { db, fresh: bytes === null, migrated: version < SCHEMA_VERSION };
}

export function openStore(ports: Ports): Store {
  const path = dbPath(ports.env);
  return {
    path,
    async read<T>(fn: (db: Database) => T): Promise<T> {
      // Each file version is complete (it arrived by rename), so a read needs
      // no lock; a migration applied here lives in memory only.
      const { db } = await load(ports, path);
      try {
        return fn(db);
      } finally {
        db.close();
      }
    },
    async write<T>(fn: (db: Database) => T): Promise<T> {
      let lock: Awaited<ReturnType<typeof acquireLock>>;
      try {
        await ports.fs.mkdirp(dirname(path));
        lock = await acquireLock(ports, `${path}.lock`);
      } catch (err) {
        throw ioError(path, err);
      }
      try {
        const { db } = await load(ports, path);
        try {
          db.exec("BEGIN");
          let out: T;
          try {
            out = fn(db);
            db.exec("COMMIT");
          } catch (err) {
            db.exec("ROLLBACK");
            throw err;
          }
          await writeDurably(ports, path, db.export()).catch((err: unknown) => {
            throw ioError(path, err);
          });
          return out;
        } finally {
          db.close();
        }
      } finally {
        await lock.release();
      }
    },
  };
}

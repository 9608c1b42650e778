import { dirname } from "node:path";
import type { Database } from "sql.js";
import type { Ports } from "../ports/types.js";
import { ensureDir, replaceDurably } from "./durable.js";
import { ioFailure } from "./failures.js";
import { acquireLock } from "./lock.js";
import { giveBack, openDb, vouchFor } from "./open-db.js";
import { dbPath } from "./paths.js";
import { retain, retentionPolicy } from "./retention.js";
import { sameSchema } from "./sqlite-file.js";
import { vouchOnDisk } from "./vouch.js";

export type { Database } from "sql.js";
export { SCHEMA_VERSION } from "./migrations.js";
export { dbPath } from "./paths.js";

// sql.js keeps the whole database in memory; the file on disk is the truth
// between invocations and between concurrent mu processes. So every write
// re-reads the file under the lock, and every commit replaces the file whole.

export interface Store {
  readonly path: string;
  /**
   * Runs fn on the latest committed state, without the lock: each file
   * version arrived by rename, so it is complete. Nothing fn does is kept,
   * and a database that needs migrating is migrated in memory only.
   */
  read<T>(fn: (db: Database) => T): Promise<T>;
  /**
   * Under the lock: loads the latest committed state, migrates it, runs fn in
   * a transaction, and if fn returns, commits durably before resolving. If fn
   * throws, nothing is written. fn must be synchronous: the lock is not held
   * for work that continues after it returns.
   */
  write<T>(fn: (db: Database) => T): Promise<T>;
  /**
   * write(fn), with each guard run first in the same transaction: whatever
   * another mu may have changed since the verb read it is checked on the
   * very state the change commits onto. A guard refuses by throwing.
   */
  guarded<T>(guards: readonly ((db: Database) => void)[], fn: (db: Database) => T): Promise<T>;
}

export function openStore(ports: Ports): Store {
  const path = dbPath(ports.env);
  const store: Store = {
    path,
    guarded(guards, fn) {
      return store.write((db) => {
        for (const g of guards) g(db);
        return fn(db);
      });
    },
    async read(fn) {
      const { db, from } = await openDb(ports, path);
      // Rolled back whatever fn does, so the connection still holds `from`.
      db.exec("BEGIN");
      try {
        return fn(db);
      } finally {
        giveBack(path, db, rollBack(db) ? from : null);
      }
    },
    async write(fn) {
      const policy = retentionPolicy(ports.env);
      const lock = await acquireLock(ports, `${path}.lock`).catch(async (err: unknown) => {
        // The first write creates the directory; the lock file lives there too.
        if ((err as { code?: unknown } | null)?.code !== "ENOENT") throw ioFailure(path, err);
        await ensureDir(ports, dirname(path)).catch((e: unknown) => {
          throw ioFailure(path, e);
        });
        return acquireLock(ports, `${path}.lock`).catch((e: unknown) => {
          throw ioFailure(path, e);
        });
      });
      try {
        const { db, from } = await openDb(ports, path);
        let committed: Uint8Array | null = null;
        try {
          const out = inTransaction(db, fn);
          await retain(ports, path, db, policy);
          const bytes = db.export();
          await replaceDurably(ports, path, bytes).catch((err: unknown) => {
            throw ioFailure(path, err);
          });
          vouchFor(path, bytes);
          await vouchOnDisk(ports, path, bytes);
          // A commit that changed the schema (only a test's does) is opened
          // afresh next time: it may need migrating, or refusing.
          if (from && sameSchema(from, bytes)) committed = bytes;
          return out;
        } finally {
          // Kept only once its bytes are the file's: a commit that failed
          // leaves a connection ahead of the disk.
          giveBack(path, db, committed);
        }
      } finally {
        await lock.release();
      }
    },
  };
  return store;
}

/** Ends a read's transaction; false if fn had already ended it (its changes may stand). */
function rollBack(db: Database): boolean {
  try {
    db.exec("ROLLBACK");
    return true;
  } catch {
    return false;
  }
}

function inTransaction<T>(db: Database, fn: (db: Database) => T): T {
  db.exec("BEGIN");
  try {
    const out = fn(db);
    if (typeof (out as { then?: unknown } | null)?.then === "function") {
      throw new TypeError(
        "store.write needs a synchronous fn; the transaction ends when it returns",
      );
    }
    db.exec("COMMIT");
    return out;
  } catch (err) {
    try {
      db.exec("ROLLBACK");
    } catch {
      // fn ended the transaction itself; the original error is the one to report
    }
    throw err;
  }
}

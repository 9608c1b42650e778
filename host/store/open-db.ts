import type { Database } from "sql.js";
import type { Ports } from "../ports/types.js";
import { corrupt, ioFailure, migrationFailed, newer } from "./failures.js";
import { MIGRATIONS, SCHEMA_VERSION } from "./migrations.js";
import { damage } from "./sqlite-file.js";
import { sqlJs } from "./sqljs.js";

/** quick_check reports over several lines ("*** in database main ***" first). */
function oneLine(err: unknown): string {
  const msg = (err instanceof Error ? err.message : String(err)).replace(/\s+/g, " ").trim();
  return msg.length > 200 ? `${msg.slice(0, 200)}...` : msg;
}

function userVersion(db: Database): number {
  return Number(db.exec("PRAGMA user_version")[0]?.values[0]?.[0] ?? 0);
}

/**
 * The committed state at `path` as an in-memory database at the current
 * schema. A missing file is an empty database; migrations run in memory and
 * reach disk only if the caller commits. Whatever is refused here (damage, a
 * newer schema) has not been written and will not be.
 */
export async function openDb(ports: Ports, path: string): Promise<Database> {
  const SQL = await sqlJs();
  const bytes = await ports.fs.readFile(path).catch((err: unknown) => {
    throw ioFailure(path, err, "read");
  });
  if (bytes === null) return migrate(new SQL.Database(), path);
  const why = damage(bytes);
  if (why) throw corrupt(path, why);
  let db: Database | undefined;
  try {
    db = new SQL.Database(bytes);
    const check = db.exec("PRAGMA quick_check")[0]?.values[0]?.[0];
    if (check !== "ok") throw new Error(String(check));
  } catch (err) {
    db?.close();
    throw corrupt(path, `SQLite says: ${oneLine(err)}`);
  }
  return migrate(db, path);
}

function migrate(db: Database, path: string): Database {
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
  return db;
}

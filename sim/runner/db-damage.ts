import { randomBytes } from "node:crypto";
import { MIGRATIONS, SCHEMA_VERSION } from "../../host/store/migrations.js";
import { sqlJs } from "../../host/store/sqljs.js";
import type { DamageStep } from "./scenario.js";

// What a damage step leaves in the DB file's place, the same on either
// engine: bytes no SQLite opens (cut, noise, nothing), a whole SQLite file
// mu must refuse or migrate (another program's, a newer or older mu's), or
// a file whose header is sound and whose pages are not, which only
// SQLite's own check finds. `directory` is laid out by each engine's disk.

/** What another program's file beside the DB holds: one JSON line of its own. */
export const BESIDE_TEXT = '{"note":"not mu\'s"}\n';

/** The damage step's keys that rewrite the DB file; the step names exactly one. */
export type DbRewrite = Pick<DamageStep["damage"], "db" | "dbCut" | "dbHeader" | "dbSql">;

type HeaderField = keyof NonNullable<DbRewrite["dbHeader"]>;

/** An application id no program of ours uses: "zzz" and a 1. */
const ANOTHER_PROGRAM = 0x7a7a7a01;

/**
 * SQLite's header fields (https://www.sqlite.org/fileformat.html, 1.3) a
 * damage may set, each at its offset and width in bytes. A page size of 1
 * is how the header spells 65536. Keyed by the scenario type's own names,
 * so a field named in one place and not the other fails to compile.
 */
const HEADER_FIELDS: Record<HeaderField, readonly [offset: number, width: 2 | 4]> = {
  pageSize: [16, 2],
  changeCounter: [24, 4],
  pageCount: [28, 4],
  freelistTrunk: [32, 4],
  freelistCount: [36, 4],
  userVersion: [60, 4],
  applicationId: [68, 4],
  validFor: [92, 4],
};

function withFields(bytes: Buffer, fields: Partial<Record<HeaderField, number>>): Buffer {
  if (bytes.length < 100) throw new Error("damage db: there is no database to change yet");
  const out = Buffer.from(bytes);
  for (const [name, value] of Object.entries(fields)) {
    const [offset, width] = HEADER_FIELDS[name as HeaderField];
    if (width === 2) out.writeUInt16BE(value, offset);
    else out.writeUInt32BE(value, offset);
  }
  return out;
}

/** Where `dbSql` text says `{mu-schema}`: mu's tables at its version, unmarked, as a mu from before the mark left them. */
const MU_SCHEMA = "{mu-schema}";

/** A new SQLite file made by running `sql` (another program's, or an early mu's). */
async function fromSql(sql: string): Promise<Buffer> {
  const SQL = await sqlJs();
  const db = new SQL.Database();
  try {
    const muSchema = `${MIGRATIONS.join(";\n")};\nPRAGMA user_version = ${SCHEMA_VERSION}`;
    db.exec(sql.split(MU_SCHEMA).join(muSchema));
    return Buffer.from(db.export());
  } finally {
    db.close();
  }
}

/** An empty database as the mu one schema before this one made it, unmarked as mus before the mark left theirs. */
async function older(): Promise<Buffer> {
  const SQL = await sqlJs();
  const db = new SQL.Database();
  try {
    for (let v = 0; v < SCHEMA_VERSION - 1; v++) db.exec(MIGRATIONS[v] as string);
    db.exec(`PRAGMA user_version = ${SCHEMA_VERSION - 1}`);
    return Buffer.from(db.export());
  } finally {
    db.close();
  }
}

/** The DB's bytes as a damage step leaves them; `noise` makes the garbage. */
export async function damagedDb(
  bytes: Buffer,
  what: DbRewrite,
  noise: (n: number) => Buffer = randomBytes,
): Promise<Buffer> {
  if (what.dbHeader !== undefined) return withFields(bytes, what.dbHeader);
  if (what.dbSql !== undefined) return fromSql(what.dbSql);
  if (what.dbCut !== undefined) {
    if (bytes.length <= what.dbCut)
      throw new Error(`damage db: the database is not longer than ${what.dbCut} bytes yet`);
    return bytes.subarray(0, what.dbCut);
  }
  const how = what.db ?? "zero";
  switch (how) {
    case "directory":
      throw new Error("damage db: a directory is laid out by the engine's own disk");
    case "truncate-half":
      return bytes.subarray(0, Math.floor(bytes.length / 2));
    case "truncate-odd":
      return bytes.subarray(0, bytes.length - 1000);
    case "garbage":
      return noise(bytes.length);
    case "zero":
      return Buffer.alloc(0);
    case "pages": {
      // Page 2 is the root of the first table mu made: a b-tree page no
      // longer, though the header still counts it.
      const size = bytes.length >= 100 ? bytes.readUInt16BE(16) : 0;
      if (bytes.length < 2 * size || size === 0)
        throw new Error("damage db: the database has no second page to damage");
      const out = Buffer.from(bytes);
      out.fill(0xa5, size, 2 * size);
      return out;
    }
    case "newer":
      return withFields(bytes, { userVersion: SCHEMA_VERSION + 1 });
    case "version-behind":
      return withFields(bytes, { userVersion: SCHEMA_VERSION - 1 });
    case "foreign":
      return withFields(bytes, { applicationId: ANOTHER_PROGRAM });
    case "older":
      return older();
  }
}

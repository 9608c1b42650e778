// A cheap and exact check that a file is a whole SQLite database before
// sql.js is handed it: SQLite opens a truncated file without complaint and
// fails later, or never, on the pages that are missing. The header says how
// long the file must be (https://www.sqlite.org/fileformat.html, section 1.3).

const MAGIC = Buffer.from("SQLite format 3\0", "latin1");
const HEADER_BYTES = 100;

/** Why the bytes are not a whole database, or null when they are. */
export function damage(bytes: Uint8Array): string | null {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length === 0) return "it is empty";
  if (b.length < HEADER_BYTES || !b.subarray(0, 16).equals(MAGIC)) return "not an SQLite file";
  const raw = b.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) {
    return `its header names no valid page size (${raw})`;
  }
  if (b.length % pageSize !== 0) {
    return `its length ${b.length} is not a whole number of ${pageSize}-byte pages`;
  }
  // The in-header page count is trustworthy only when the same commit wrote
  // it as the change counter; a legacy writer may leave it stale. sql.js
  // always writes both, so every file mu wrote is checked exactly.
  const changeCounter = b.readUInt32BE(24);
  const pages = b.readUInt32BE(28);
  const validFor = b.readUInt32BE(92);
  if (changeCounter === validFor && pages * pageSize !== b.length) {
    return `it holds ${b.length / pageSize} pages but its header says ${pages}`;
  }
  return null;
}

/**
 * Whether two whole databases have the same schema and user_version: the
 * header's schema cookie (offset 40) changes with every change to the
 * schema, and offset 60 holds the user_version.
 */
export function sameSchema(a: Uint8Array, b: Uint8Array): boolean {
  const x = Buffer.from(a.buffer, a.byteOffset, a.byteLength);
  const y = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  return x.readUInt32BE(40) === y.readUInt32BE(40) && x.readUInt32BE(60) === y.readUInt32BE(60);
}

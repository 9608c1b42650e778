// A cheap and exact check that a file is a whole SQLite database before
// sql.js is handed it: sql.js would otherwise open a truncated file and
// fail later, or not at all, on the pages that are missing.

const MAGIC = Buffer.from("SQLite format 3\0", "latin1");

/** Why the bytes are not a whole database, or null when they are. */
export function damage(bytes: Uint8Array): string | null {
  const b = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (b.length === 0) return "it is empty";
  if (b.length < 100 || !b.subarray(0, 16).equals(MAGIC)) return "it is not an SQLite file";
  const raw = b.readUInt16BE(16);
  const pageSize = raw === 1 ? 65536 : raw;
  if (pageSize < 512 || (pageSize & (pageSize - 1)) !== 0)
    return "its header names no valid page size";
  if (b.length % pageSize !== 0)
    return `its length ${b.length} is not a whole number of ${pageSize}-byte pages`;
  const changeCounter = b.readUInt32BE(24);
  const pages = b.readUInt32BE(28);
  const validFor = b.readUInt32BE(92);
  // The in-header page count is only meaningful when written by the same
  // change as the counter; sql.js always writes both.
  if (changeCounter === validFor && pages * pageSize !== b.length) {
    return `it holds ${b.length / pageSize} pages but its header says ${pages}`;
  }
  return null;
}

import { crc32 } from "../checksum.js";
import type { Ports } from "../ports/types.js";

// Which database bytes need no integrity check when a process opens them.
// quick_check reads every page: some 9 ms of a short verb's start on a small
// database, and it grows with the file. But bytes a mu committed are
// sql.js's own export, sound by construction; only bytes changed since (by
// the disk, another program, an older mu) need the look. So each commit
// leaves beside the file the CRC-32 and length of the bytes it wrote, and an
// open whose bytes match them skips the check.
//
// The note is a hint, never trusted past the bytes: it is written without
// fsync, and a torn, missing, stale or foreign note only means the check
// runs. A commit writes it under the store's lock, right after the rename,
// so no other writer's bytes can land between. Like the CRC elsewhere, it
// tells mu's own bytes from changed ones; it is no defence against someone
// who can write mu's files, who could write a sound database as well.

/** The note's path beside the database. */
export const vouchPath = (dbPath: string) => `${dbPath}.checked`;

function noteOf(bytes: Uint8Array): string | null {
  const sum = crc32(bytes);
  return sum === null ? null : `${sum} ${bytes.length}\n`;
}

/** Records `bytes`, just committed to dbPath, as mu's own. A failure only costs the next open a check. */
export async function vouchOnDisk(ports: Ports, dbPath: string, bytes: Uint8Array): Promise<void> {
  const note = noteOf(bytes);
  if (note === null) return;
  try {
    const fh = await ports.fs.open(vouchPath(dbPath), { mode: 0o600 });
    try {
      await fh.write(Buffer.from(note, "ascii"));
    } finally {
      await fh.close();
    }
  } catch {
    // the check runs instead
  }
}

/** Whether `bytes` are the ones the last commit's note names. */
export async function vouchedOnDisk(
  ports: Ports,
  dbPath: string,
  bytes: Uint8Array,
): Promise<boolean> {
  const note = await ports.fs.readFile(vouchPath(dbPath)).catch(() => null);
  if (note === null) return false;
  const want = noteOf(bytes);
  return want !== null && Buffer.from(note).toString("latin1") === want;
}

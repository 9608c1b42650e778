import { randomBytes } from "node:crypto";
import { dirname } from "node:path";
import { crashPoint } from "../crash-point.js";
import type { Ports } from "../ports/types.js";

/**
 * Replaces the file so that a crash at any moment leaves either the old bytes
 * or the new ones: temp file in the same directory, fsync, rename over,
 * fsync the directory so the rename itself survives.
 */
export async function writeDurably(ports: Ports, path: string, bytes: Uint8Array): Promise<void> {
  const dir = dirname(path);
  await ports.fs.mkdirp(dir);
  const tmp = `${path}.tmp-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    const fh = await ports.fs.open(tmp);
    try {
      await fh.write(bytes);
      await fh.sync();
    } finally {
      await fh.close();
    }
    crashPoint("store.before-rename", ports.env);
    await ports.fs.rename(tmp, path);
  } catch (err) {
    await ports.fs.unlink(tmp);
    throw err;
  }
  await ports.fs.syncDir(dir);
}

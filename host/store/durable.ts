import { basename, dirname, join } from "node:path";
import { type CrashPointName, crashPoint } from "../crash-point.js";
import type { Ports } from "../ports/types.js";
import { planted, TESTBED_BUILD } from "../testbed-plant.js";

/**
 * Creates the database's directory (0700: the DB holds plugin argv and task
 * state) and makes the new entry itself durable, so the first commit does not
 * vanish with its directory after a power cut.
 */
export async function ensureDir(ports: Ports, dir: string): Promise<void> {
  if ((await ports.fs.stat(dir))?.type === "directory") return;
  await ports.fs.mkdirp(dir, 0o700);
  await ports.fs.syncDir(dirname(dir));
}

/**
 * A writer killed between writing its temp file and the rename leaves the
 * temp behind. The next writer (it holds the lock, so no live writer races
 * it) removes every temp of a file `of` accepts whose writer's pid no longer
 * runs.
 */
export async function removeDeadTemps(
  ports: Ports,
  dir: string,
  of: (file: string) => boolean,
): Promise<void> {
  for (const name of await ports.fs.readdir(dir)) {
    const at = name.lastIndexOf(TEMP);
    if (at === -1 || !of(name.slice(0, at))) continue;
    const pid = Number(name.slice(at + TEMP.length).split("-")[0]);
    if (Number.isInteger(pid) && pid > 0 && ports.liveness.startOf(pid) === null) {
      await ports.fs.unlink(join(dir, name)).catch(() => {});
    }
  }
}

const TEMP = ".tmp-";

/**
 * Replaces the file so that a crash at any moment leaves either the old bytes
 * or the new ones, and so that once this returns the new bytes survive a power
 * cut: temp file in the same directory (rename is atomic only within one
 * filesystem), fsync, rename over, fsync the directory that holds the rename.
 */
export async function replaceDurably(
  ports: Ports,
  path: string,
  bytes: Uint8Array,
  point: CrashPointName = "store.before-rename",
): Promise<void> {
  const dir = dirname(path);
  await removeDeadTemps(ports, dir, (file) => file === basename(path));
  // Named by the writer's pid, so the next writer can tell a dead one's leftovers.
  const tmp = `${path}${TEMP}${ports.liveness.self().pid}-${ports.random.hex(4)}`;
  try {
    const fh = await ports.fs.open(tmp, { exclusive: true, mode: 0o600 });
    try {
      await fh.write(bytes);
      if (!(TESTBED_BUILD && planted(ports.env, "no-temp-fsync"))) await fh.sync();
    } finally {
      await fh.close();
    }
    await crashPoint(point, ports);
    await ports.fs.rename(tmp, path);
  } catch (err) {
    await ports.fs.unlink(tmp).catch(() => {});
    throw err;
  }
  if (!(TESTBED_BUILD && planted(ports.env, "no-dir-fsync"))) await ports.fs.syncDir(dir);
}

import type * as nodeFs from "node:fs";
import { realLiveness } from "../../host/ports/real.js";

// The lock around a world's read-modify-write. Several plugin processes (and
// the runner) share one world directory; each update is milliseconds, but on
// a loaded machine a holder can sit descheduled for seconds. Taking the lock
// from a holder that is still alive loses one of the two updates, and the
// robbed holder's unlock then frees the thief's lock too. So the lock names
// its holder's pid and is taken over only once that process is gone.

type LockFs = Pick<
  typeof nodeFs,
  "closeSync" | "openSync" | "readFileSync" | "rmSync" | "writeSync"
>;

/**
 * Past this, a holder is taken to be a pid reused by some other process (or
 * one that died between creating the lock and naming itself): no update
 * holds the lock anywhere near as long.
 */
const GIVE_UP_MS = 30_000;

/** As the sim judges its views' processes (sim-io.ts): a pid with a start time is alive. */
const alive = (pid: number): boolean => realLiveness.startOf(pid) !== null;

/** Whether a waiter may take the lock whose file reads `content`, after `waitedMs`. */
export function holderGone(
  content: string,
  waitedMs: number,
  isAlive: (pid: number) => boolean = alive,
): boolean {
  if (waitedMs > GIVE_UP_MS) return true;
  const pid = Number.parseInt(content, 10);
  // Empty: its holder is between creating the file and writing its pid.
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  return !isAlive(pid);
}

function readOr(fs: LockFs, path: string): string | undefined {
  try {
    return String(fs.readFileSync(path, "utf8"));
  } catch {
    return undefined;
  }
}

/** Runs `fn` holding `lock`; waits (blocking, in 5 ms steps) while a live process holds it. */
export function withLock<T>(fs: LockFs, lock: string, fn: () => T, now = Date.now): T {
  const started = now();
  for (;;) {
    try {
      const fd = fs.openSync(lock, "wx");
      try {
        fs.writeSync(fd, String(process.pid));
      } finally {
        fs.closeSync(fd);
      }
      break;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const content = readOr(fs, lock);
      // Freed between the two calls: try again at once.
      if (content === undefined) continue;
      // Read again just before removing, so a waiter that took the lock over
      // from the same dead holder a moment ago keeps the lock it now holds.
      if (holderGone(content, now() - started) && readOr(fs, lock) === content) {
        fs.rmSync(lock, { force: true });
        continue;
      }
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }
  try {
    return fn();
  } finally {
    fs.rmSync(lock, { force: true });
  }
}

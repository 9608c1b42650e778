import { randomBytes } from "node:crypto";
import { closeSync, fsyncSync, openSync, readFileSync } from "node:fs";
import * as fsp from "node:fs/promises";
import { envMs } from "../env-ms.js";
import { liveProcesses } from "./proc-scan.js";
import { realSpawner } from "./spawner.js";
import type {
  Clock,
  FileHandle,
  FileSystem,
  Liveness,
  Ports,
  ProcessId,
  Randomness,
} from "./types.js";

export const realClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) =>
    new Promise((resolve) => {
      setTimeout(resolve, ms);
    }),
  setTimer(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

function isCode(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === code;
}

export const realFs: FileSystem = {
  async stat(path) {
    try {
      const st = await fsp.stat(path);
      return {
        type: st.isFile() ? "file" : st.isDirectory() ? "directory" : "other",
        uid: st.uid,
        mode: st.mode & 0o7777,
      };
    } catch (err) {
      if (isCode(err, "ENOENT") || isCode(err, "ENOTDIR") || isCode(err, "ELOOP")) return null;
      throw err;
    }
  },
  async readFile(path) {
    try {
      return new Uint8Array(await fsp.readFile(path));
    } catch (err) {
      if (isCode(err, "ENOENT")) return null;
      throw err;
    }
  },
  async readHead(path, maxBytes) {
    let fh: fsp.FileHandle;
    try {
      fh = await fsp.open(path, "r");
    } catch (err) {
      if (isCode(err, "ENOENT")) return null;
      throw err;
    }
    try {
      const buf = Buffer.alloc(maxBytes);
      let n = 0;
      while (n < maxBytes) {
        const { bytesRead } = await fh.read(buf, n, maxBytes - n, null);
        if (bytesRead === 0) break;
        n += bytesRead;
      }
      return new Uint8Array(buf.buffer, buf.byteOffset, n);
    } finally {
      await fh.close();
    }
  },
  async open(path, opts = {}) {
    const fh = await fsp.open(path, opts.exclusive ? "wx" : "w", opts.mode ?? 0o600);
    const handle: FileHandle = {
      write: async (data) => {
        await fh.write(data);
      },
      sync: () => fh.sync(),
      close: () => fh.close(),
    };
    return handle;
  },
  rename: (from, to) => fsp.rename(from, to),
  async unlink(path) {
    try {
      await fsp.unlink(path);
    } catch (err) {
      if (!isCode(err, "ENOENT")) throw err;
    }
  },
  async mkdirp(path, mode = 0o700) {
    await fsp.mkdir(path, { recursive: true, mode });
  },
  async readdir(path) {
    try {
      return await fsp.readdir(path);
    } catch (err) {
      if (isCode(err, "ENOENT")) return [];
      throw err;
    }
  },
  async syncDir(path) {
    // Directories open read-only; fsync on the descriptor flushes the entry.
    const fd = openSync(path, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  },
};

/**
 * Field 22 of /proc/<pid>/stat is the start time in clock ticks since boot.
 * The command name (field 2) may hold spaces and parentheses, so parse from
 * the last ')'.
 */
function procStart(pid: number): string | null {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return null;
  }
  const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // rest[0] is field 3 (state); field 22 is rest[19].
  if (rest[0] === "Z") return null; // a zombie has exited; only its parent's wait is left
  return rest[19] ?? null;
}

export const realLiveness: Liveness = {
  self(): ProcessId {
    const start = procStart(process.pid);
    if (start === null) throw new Error("cannot read this process's start time from /proc");
    return { pid: process.pid, start };
  },
  startOf: procStart,
  alive(id) {
    return procStart(id.pid) === id.start;
  },
  groupEmpty(pgid) {
    // No member at all, not even a zombie, is one syscall; the pass over /proc
    // (about 10 ms) is only for telling live members from zombies.
    try {
      process.kill(-pgid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ESRCH") return true;
    }
    for (const p of liveProcesses()) if (p.pgid === pgid) return false;
    return true;
  },
};

/**
 * Testbed only: MU_CLOCK_OFFSET_MS moves mu's "now" (never its timers), so a
 * scenario can let a dedupe window or an in-flight bound pass without
 * waiting for it. Unset, the clock is left as it is. The virtual engine
 * offsets its own clock with this too.
 */
export function withClockOffset(
  clock: Clock,
  env: Readonly<Record<string, string | undefined>>,
): Clock {
  const offset = envMs(env, "MU_CLOCK_OFFSET_MS");
  if (offset === 0) return clock;
  return {
    now: () => clock.now() + offset,
    sleep: (ms) => clock.sleep(ms),
    setTimer: (ms, fn) => clock.setTimer(ms, fn),
  };
}

export const realRandom: Randomness = {
  hex: (bytes) => randomBytes(bytes).toString("hex"),
  fraction: () => Math.random(),
};

export function realPorts(env: Record<string, string | undefined> = process.env): Ports {
  return {
    clock: withClockOffset(realClock, env),
    random: realRandom,
    fs: realFs,
    liveness: realLiveness,
    spawner: realSpawner,
    env,
    uid: process.getuid?.() ?? -1,
    // Read when used, and never a throw: most verbs need no directory, and a
    // shell left in a removed one (a closed agent's worktree) must not stop
    // them; "." still names it to a child's spawn.
    get cwd() {
      try {
        return process.cwd();
      } catch {
        return ".";
      }
    },
    crash() {
      process.kill(process.pid, "SIGKILL");
      // Delivered before kill returns; nothing waits on this.
      return new Promise<never>(() => {});
    },
  };
}

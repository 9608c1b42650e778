import { envMs, MS_VARIABLES } from "../env-ms.js";
import type { Ports, ProcessId } from "../ports/types.js";
import { locked } from "./failures.js";

// One cross-process exclusive lock per database: `<db>.lock`, created with
// O_EXCL, naming its holder by pid and process start time (so a reused pid is
// never taken for a live holder) plus a token for this one acquisition.
//
// A lock whose holder is dead is broken under a second O_EXCL file,
// `<db>.lock.break`: only the process holding that file may delete the lock,
// and only after re-reading it and finding the very content it judged stale,
// so two recoverers never both delete a lock and the second never deletes
// the first one's fresh lock. A break file whose own holder is dead is
// removed by whoever sees it. (What is left: a recoverer that dies inside its
// microsecond-wide break step, and a second one removing that break file at
// the same instant as a third takes it; we accept that.)
//
// A lock file that does not parse belongs to a holder that died between its
// create and its write (or to a crash of the machine, since the lock is not
// fsynced: it only matters among live processes). A live holder writes a few
// bytes right after the create, so the same unparseable content seen for
// GARBLED_STALE_MS of re-reads is stale. Should a holder really stall that
// long and lose its lock, its own read-back after the write tells it so.

export const DEFAULT_LOCK_TIMEOUT_MS = MS_VARIABLES.MU_LOCK_TIMEOUT_MS.fallback;
const POLL_MS = 15;
const GARBLED_STALE_MS = 1_000;

interface Holder {
  raw: string;
  /** null: the content does not parse (yet, or ever). */
  id: ProcessId | null;
}

export interface HeldLock {
  /** Deletes the lock if it is still ours; never throws (a left lock is stale once we exit). */
  release(): Promise<void>;
}

export function lockTimeoutMs(env: Readonly<Record<string, string | undefined>>): number {
  return envMs(env, "MU_LOCK_TIMEOUT_MS");
}

export async function acquireLock(ports: Ports, path: string): Promise<HeldLock> {
  const timeout = lockTimeoutMs(ports.env);
  const started = ports.clock.now();
  const deadline = started + timeout;
  const attempt = lockAttempts(ports);
  for (let tries = 1; ; tries++) {
    const r = await attempt(path);
    if ("release" in r) {
      // Only waits are noted: a crew's contention is what the count shows.
      if (tries > 1) ports.note?.("lock-wait", { ms: ports.clock.now() - started, tries });
      return r;
    }
    if (ports.clock.now() >= deadline) throw locked(path, r.holder, timeout);
    await ports.clock.sleep(POLL_MS + Math.floor(ports.random.fraction() * POLL_MS));
  }
}

/**
 * One try at a lock, breaking it if its holder is dead. The returned function
 * remembers, across tries, how long an unparseable lock has looked the same,
 * so make one per waiting loop.
 */
export function lockAttempts(
  ports: Ports,
): (path: string) => Promise<HeldLock | { holder: number | null }> {
  const mine = JSON.stringify({ ...ports.liveness.self(), token: ports.random.hex(6) });
  const stale = staleness(ports);
  return async (path) => {
    for (;;) {
      if (await claim(ports, path, mine))
        return { release: () => releaseIfMine(ports, path, mine) };
      const h = await readHolder(ports, path);
      // Released between our create and our read: try again at once.
      if (h === null) continue;
      if (stale(path, h) && (await breakStale(ports, path, h.raw, mine, stale))) continue;
      return { holder: h.id?.pid ?? null };
    }
  };
}

/** Creates `path` holding `content` unless it exists; true when it is ours afterwards. */
async function claim(ports: Ports, path: string, content: string): Promise<boolean> {
  let fh: Awaited<ReturnType<Ports["fs"]["open"]>>;
  try {
    fh = await ports.fs.open(path, { exclusive: true });
  } catch (err) {
    if ((err as { code?: unknown } | null)?.code === "EEXIST") return false;
    throw err;
  }
  try {
    await fh.write(Buffer.from(content));
  } finally {
    await fh.close();
  }
  // A recoverer may have taken our still-empty file for a dead holder's.
  return (await readHolder(ports, path))?.raw === content;
}

async function readHolder(ports: Ports, path: string): Promise<Holder | null> {
  const bytes = await ports.fs.readFile(path);
  if (bytes === null) return null;
  const raw = Buffer.from(bytes).toString("utf8");
  try {
    const v = JSON.parse(raw) as { pid?: unknown; start?: unknown };
    if (Number.isInteger(v.pid) && (v.pid as number) > 0 && typeof v.start === "string") {
      return { raw, id: { pid: v.pid as number, start: v.start } };
    }
  } catch {
    // judged by how long it stays unparseable
  }
  return { raw, id: null };
}

type Staleness = (path: string, h: Holder) => boolean;

function staleness(ports: Ports): Staleness {
  const firstSeen = new Map<string, number>();
  return (path, h) => {
    if (h.id !== null) return !ports.liveness.alive(h.id);
    const key = `${path}\0${h.raw}`;
    const now = ports.clock.now();
    const since = firstSeen.get(key) ?? now;
    firstSeen.set(key, since);
    return now - since >= GARBLED_STALE_MS;
  };
}

/** True when the stale lock is gone (by us or anyone); false to wait and look again. */
async function breakStale(
  ports: Ports,
  path: string,
  staleRaw: string,
  mine: string,
  stale: Staleness,
): Promise<boolean> {
  const breaker = `${path}.break`;
  if (!(await claim(ports, breaker, mine))) {
    const b = await readHolder(ports, breaker);
    if (b !== null && stale(breaker, b)) await ports.fs.unlink(breaker);
    return false;
  }
  try {
    const now = await readHolder(ports, path);
    if (now === null) return true;
    if (now.raw !== staleRaw) return false;
    await ports.fs.unlink(path);
    return true;
  } finally {
    await releaseIfMine(ports, breaker, mine);
  }
}

async function releaseIfMine(ports: Ports, path: string, mine: string): Promise<void> {
  try {
    if ((await readHolder(ports, path))?.raw === mine) await ports.fs.unlink(path);
  } catch {
    // Left behind, it names us; once we exit it is stale and gets broken.
  }
}

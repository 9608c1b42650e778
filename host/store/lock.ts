import { UnavailableError } from "../errors.js";
import type { Ports, ProcessId } from "../ports/types.js";

// One cross-process exclusive lock per DB: a file created with O_EXCL that
// names its holder by pid and process start time, so a reused pid is never
// mistaken for a live holder. A dead holder's lock is taken over under a
// second O_EXCL file (".break"), so two processes recovering the same stale
// lock cannot both delete it and then both believe they hold a fresh one.

export const DEFAULT_LOCK_TIMEOUT_MS = 10_000;
const POLL_MS = 15;
/** A lock file still unparseable after this long belonged to a holder that died between create and write. */
const HALF_WRITTEN_MS = 1_000;

type Holder =
  | { kind: "held"; id: ProcessId; raw: string }
  | { kind: "garbled"; raw: string }
  | { kind: "none" };

function isCode(err: unknown, code: string): boolean {
  return typeof err === "object" && err !== null && (err as { code?: unknown }).code === code;
}

async function readHolder(ports: Ports, path: string): Promise<Holder> {
  const bytes = await ports.fs.readFile(path);
  if (bytes === null) return { kind: "none" };
  const raw = Buffer.from(bytes).toString("utf8");
  try {
    const v = JSON.parse(raw) as Partial<ProcessId>;
    if (typeof v.pid === "number" && typeof v.start === "string")
      return { kind: "held", id: { pid: v.pid, start: v.start }, raw };
  } catch {
    // garbled: judged below by how long it stays so
  }
  return { kind: "garbled", raw };
}

async function tryCreate(ports: Ports, path: string, content: string): Promise<boolean> {
  try {
    const fh = await ports.fs.open(path, { exclusive: true });
    try {
      await fh.write(Buffer.from(content));
      await fh.sync();
    } finally {
      await fh.close();
    }
    return true;
  } catch (err) {
    if (isCode(err, "EEXIST")) return false;
    throw err;
  }
}

export interface HeldLock {
  release(): Promise<void>;
}

export async function acquireLock(ports: Ports, path: string): Promise<HeldLock> {
  const me = JSON.stringify(ports.liveness.self());
  const timeout = Number(ports.env.MU_LOCK_TIMEOUT_MS ?? DEFAULT_LOCK_TIMEOUT_MS);
  const until = ports.clock.now() + timeout;
  const garbledSince = new Map<string, number>();
  for (;;) {
    if (await tryCreate(ports, path, me)) {
      return {
        release: async () => {
          // Only ever delete our own lock.
          const h = await readHolder(ports, path);
          if (h.kind !== "none" && h.raw === me) await ports.fs.unlink(path);
        },
      };
    }
    const h = await readHolder(ports, path);
    if (h.kind !== "none" && isStale(ports, h, garbledSince))
      await breakLock(ports, path, h.raw, me, garbledSince);
    if (ports.clock.now() >= until) {
      const who = h.kind === "held" ? `pid ${h.id.pid}` : "another mu";
      throw new UnavailableError(
        "store.locked",
        "store",
        `the database lock ${path} is held by ${who} (waited ${timeout} ms)`,
        {
          hint: "wait for that mu to finish and try again, or raise MU_LOCK_TIMEOUT_MS",
        },
      );
    }
    await ports.clock.sleep(POLL_MS + Math.floor(Math.random() * POLL_MS));
  }
}

function isStale(
  ports: Ports,
  h: Exclude<Holder, { kind: "none" }>,
  garbledSince: Map<string, number>,
): boolean {
  if (h.kind === "held") return !ports.liveness.alive(h.id);
  const first = garbledSince.get(h.raw) ?? ports.clock.now();
  garbledSince.set(h.raw, first);
  return ports.clock.now() - first >= HALF_WRITTEN_MS;
}

async function breakLock(
  ports: Ports,
  path: string,
  staleRaw: string,
  me: string,
  garbledSince: Map<string, number>,
): Promise<void> {
  const breaker = `${path}.break`;
  if (!(await tryCreate(ports, breaker, me))) {
    // Someone else is breaking it; if that breaker died, clear its file.
    const b = await readHolder(ports, breaker);
    if (b.kind !== "none" && isStale(ports, b, garbledSince)) {
      const again = await readHolder(ports, breaker);
      if (again.kind !== "none" && again.raw === b.raw) await ports.fs.unlink(breaker);
    }
    return;
  }
  try {
    const now = await readHolder(ports, path);
    // Still the same stale content: nobody took the lock meanwhile.
    if (now.kind !== "none" && now.raw === staleRaw) await ports.fs.unlink(path);
  } finally {
    await ports.fs.unlink(breaker);
  }
}

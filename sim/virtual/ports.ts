import FakeTimers from "@sinonjs/fake-timers";
import { withClockOffset } from "../../host/ports/real.js";
import type { Clock, Liveness, Ports, ProcessId, ProcessSpawner } from "../../host/ports/types.js";
import { scriptsUnderWay } from "../plugin/machine.js";
import { VirtualFs } from "./fs.js";
import type { Interleaver } from "./interleave.js";
import { seededRandom } from "./rng.js";

// The virtual engine's world below mu: a clock that only moves when the
// engine says (a 5 s grace costs no wall time), the crash-model disk, and
// processes that are entries in a table. A crashed mu is a process that is
// gone from the table; its locks and intents then read as a dead writer's.

export class VirtualClock implements Clock {
  readonly fake = FakeTimers.createClock(Date.UTC(2026, 0, 1));
  /** Jumps to the next timer so far: what waiting costs the engine in real work. */
  jumps = 0;
  /** The seeded scheduler, when the run has one: its waiters go on before time moves. */
  interleaver: Interleaver | undefined;

  now(): number {
    return this.fake.now;
  }

  sleep(ms: number): Promise<void> {
    return new Promise((done) => {
      this.fake.setTimeout(() => done(), ms);
    });
  }

  setTimer(ms: number, fn: () => void): { cancel(): void } {
    const id = this.fake.setTimeout(fn, ms);
    return { cancel: () => this.fake.clearTimeout(id) };
  }

  /** Moves virtual time on, running every timer due on the way. */
  async advance(ms: number): Promise<void> {
    await this.fake.tickAsync(ms);
  }

  /**
   * Runs `work` to its end, moving virtual time whenever it waits: a poll
   * loop or a grace then costs no wall time. Gives up after `limitMs` of
   * virtual time, as a hung run.
   */
  async run<T>(work: Promise<T>, limitMs = 120_000, whenIdle?: () => T): Promise<T> {
    let done = false;
    /** Looks in a row that found nothing that could move the run on. */
    let idle = 0;
    const settled = work.finally(() => {
      done = true;
    });
    // Looked at after the loop: a rejection meanwhile is not unhandled.
    settled.catch(() => {});
    const until = this.fake.now + limitMs;
    let movedAt = Date.now();
    while (!done && this.fake.now < until) {
      await new Promise((r) => setImmediate(r));
      if (done) break;
      // Real work under way (a module's first import), or no virtual timer
      // to wait for: real time passes and virtual time stands still, so how
      // long real work took never shows in the run, and the same seed gives
      // the same run.
      const real = realWorkPending();
      if (real === "child") {
        // A script or git on a simulated host: virtual time waits for it,
        // however long it takes, without spinning the CPU it needs.
        movedAt = Date.now();
        idle = 0;
        await new Promise((r) => setTimeout(r, 1));
        continue;
      }
      if (real) {
        if (Date.now() - movedAt > STUCK_MS)
          throw new Error(`stuck: no virtual timer and no progress for ${STUCK_MS} ms`);
        continue;
      }
      // An invocation ready to go on goes before any timer: time moves only
      // once every one of them waits on it. Only once no real work is under
      // way, as a module that a busy machine loads later would otherwise
      // change whose turn it is.
      if (this.interleaver?.waiting) {
        this.interleaver.release();
        movedAt = Date.now();
        idle = 0;
        continue;
      }
      if (this.fake.countTimers() === 0) {
        // Nothing can happen any more: a caller that said what that means
        // gets it at once, rather than the hang guard half a minute later.
        if (whenIdle && ++idle >= IDLE_LOOKS) return whenIdle();
        if (Date.now() - movedAt > STUCK_MS)
          throw new Error(`stuck: no virtual timer and no progress for ${STUCK_MS} ms`);
        await new Promise((r) => setTimeout(r, 1));
        continue;
      }
      // Nothing but a virtual timer can move the run on now: jump straight to
      // it. What the timer sets going runs in the loop's next turn, so one
      // turn per jump is enough (nextAsync would spend two more).
      movedAt = Date.now();
      idle = 0;
      if (JITTER_MS > 0) await new Promise((r) => setTimeout(r, Math.random() * JITTER_MS));
      this.jumps++;
      this.fake.next();
    }
    if (!done) throw new Error(`still running after ${limitMs} ms of virtual time`);
    return settled;
  }
}

/**
 * Testbed only: up to this many real milliseconds slept before each jump of
 * virtual time, as a busy machine would stall the engine. A run whose bytes
 * change with it depends on real timing (test/virtual-determinism.test.ts).
 */
const JITTER_MS = Number(process.env.MU_TESTBED_REAL_JITTER_MS ?? 0);

/** How many looks in a row must find nothing to run before a run counts as idle (pipes settle on the loop's turns). */
const IDLE_LOOKS = 20;

/** Wall time a run may wait on real work with no virtual timer before it counts as hung. */
const STUCK_MS = 30_000;

/**
 * Real work of this process still under way: a child process (a script or
 * git run for real; a simulated host's script until its pipes close, which
 * may come after its process exited), or a file request in libuv's pool (a
 * module load, say).
 */
function realWorkPending(): "child" | "io" | undefined {
  const live = process.getActiveResourcesInfo();
  // A script whose process exited is still under way until its pipes close:
  // a jump then could fire the deadline of the call it is about to answer.
  if (live.includes("ProcessWrap") || scriptsUnderWay() > 0) return "child";
  return live.some((r) => /FSReq|CloseReq|FileHandle/.test(r)) ? "io" : undefined;
}

export class VirtualProcesses implements Liveness {
  private next = 1000;
  private readonly live = new Map<number, { start: string; pgid: number }>();
  current: ProcessId;

  constructor(private readonly clock?: Clock) {
    // As on a real machine, low pids belong to processes that never exit
    // (init is pid 1): a pid read wrong from a file name finds them alive.
    this.live.set(1, { start: "v1", pgid: 1 });
    this.current = this.start();
  }

  /**
   * A new process (a mu invocation, a plugin): its pid and start time. As
   * /proc's start time counts clock ticks, processes started within one
   * 10 ms tick share it: only the pair tells two processes apart.
   */
  start(pgid?: number): ProcessId {
    const pid = this.next++;
    const start = this.clock ? `t${Math.floor(this.clock.now() / 10)}` : `v${pid}`;
    this.live.set(pid, { start, pgid: pgid ?? pid });
    return { pid, start };
  }

  /** The process ends: by exit, kill or a crash. */
  end(pid: number): void {
    this.live.delete(pid);
  }

  self(): ProcessId {
    return this.current;
  }

  startOf(pid: number): string | null {
    return this.live.get(pid)?.start ?? null;
  }

  alive(id: ProcessId): boolean {
    return this.live.get(id.pid)?.start === id.start;
  }

  groupEmpty(pgid: number): boolean {
    for (const p of this.live.values()) if (p.pgid === pgid) return false;
    return true;
  }
}

const noSpawn: ProcessSpawner = {
  spawn: () => Promise.reject(new Error("the virtual engine starts no real process")),
};

export interface VirtualWorld {
  clock: VirtualClock;
  fs: VirtualFs;
  processes: VirtualProcesses;
  /** `cwd` is where the run stands: a scenario's own directory, never this process's. */
  ports(env?: Record<string, string>, cwd?: string): Ports;
}

/**
 * The clock moved by MU_CLOCK_OFFSET_MS; left as it is when the value is
 * not valid, which mu's check of its variables then refuses as a real mu
 * does (the ports are built here, before that check runs).
 */
function offsetOrAsIs(clock: VirtualClock, env: Readonly<Record<string, string | undefined>>) {
  try {
    return withClockOffset(clock, env);
  } catch {
    return clock;
  }
}

/** A world whose randomness follows `seed`: the same seed, the same keys. */
export function virtualWorld(seed = 1): VirtualWorld {
  const random = seededRandom(seed);
  const clock = new VirtualClock();
  const fs = new VirtualFs();
  const processes = new VirtualProcesses(clock);
  return {
    clock,
    fs,
    processes,
    ports: (env = {}, cwd = "/") => ({
      clock: offsetOrAsIs(clock, env),
      fs,
      liveness: processes,
      random,
      spawner: noSpawn,
      env: { MU_DB_PATH: "/state/mu.db", ...env },
      uid: fs.uid,
      cwd,
      crash: () =>
        Promise.reject(new Error("no virtual process to crash: run mu through a VirtualMu")),
    }),
  };
}

import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect } from "vitest";
import { nothingMade } from "../host/contract/made.js";
import type { RunContext, Session } from "../host/contract/session.js";
import { CheckFailed } from "../host/contract/verdict.js";
import { ErrorReply } from "../host/plugin/call-errors.js";

// A provider for in-process tests of `mu plugin check`'s host checks: a
// machine is a directory, link.exec runs the script under sh there, and
// every start of the "plugin" shares one backend, as starts of a real
// provider share its cloud. Correct by default; each hook replaces one
// answer, so a test can give the check the answer a broken provider would.
// The real-process runs (test/contract-host-fixture.test.ts) prove the same
// checks against a plugin on the wire.

export const INSTANCE = "inst-1";

export type Exec = { exitCode: number; stdout: string; stderr: string };

export interface Machine {
  key: string;
  handle: string;
  state: "up" | "gone";
  dir: string;
}

export interface Hooks {
  /**
   * What host.acquire answers; by default it makes a machine per key (the
   * same one for a repeat) and answers its handle. make() is that default's
   * first half, for a hook whose acquire takes effect.
   */
  acquire?: (key: string, params: Record<string, unknown>, make: () => Machine) => unknown;
  /** What host.release answers, n counting from 1 per key; null by default. */
  release?: (key: string, n: number) => unknown;
  /** What host.status answers, n counting from 1 per handle. */
  status?: (m: Machine | undefined, n: number) => unknown;
  /** What host.lookup answers. */
  lookup?: (key: string, m: Machine | undefined) => unknown;
  /** What link.exec on a released machine does; a correct provider refuses it. */
  goneExec?: (script: string, dir: string) => Exec | null;
  /** What link.exec does on a live machine; by default it runs the script. */
  liveExec?: (script: string, dir: string) => Exec;
  /** The state of a start's connection once a call failed: "open" unless set. */
  conn?: string;
}

/**
 * The first absolute path a script names outside dir, if any (/dev/null
 * aside). The scripts are the check's, run as the machine's user, and under
 * a mutant a path can lose its directory: a FIFO made at /.git/HEAD, say,
 * blocks every git that looks for a repository above its directory.
 */
export function outside(script: string, dir: string): string | undefined {
  // A script may name dir as pwd -P prints it.
  const homes = [dir, realpathSync(dir)];
  for (const m of script.matchAll(/(?:^|[\s'"=<>])(\/[^\s'";|&)<>]*)/g)) {
    const path = m[1] as string;
    if (path === "/dev/null" || homes.some((h) => path === h || path.startsWith(`${h}/`))) continue;
    return path;
  }
  return undefined;
}

/** Runs a check's script under sh in dir, refusing one that names a path outside it. */
export const sh = (script: string, dir: string): Exec => {
  const far = outside(script, dir);
  if (far !== undefined)
    return { exitCode: 126, stdout: "", stderr: `fake: refused a path outside ${dir}: ${far}` };
  try {
    const stdout = execFileSync("sh", ["-c", script], { cwd: dir, encoding: "utf8" });
    return { exitCode: 0, stdout, stderr: "" };
  } catch (err) {
    const e = err as { status: number; stdout: string; stderr: string };
    return { exitCode: e.status, stdout: e.stdout, stderr: e.stderr };
  }
};

export const refusal = (method: string, message: string) =>
  new ErrorReply(method, "permanent", message);

export class FakeProvider {
  readonly home = mkdtempSync(join(tmpdir(), "mu-fake-provider-"));
  readonly machines = new Map<string, Machine>();
  readonly calls: { method: string; params: Record<string, unknown> }[] = [];
  readonly count = new Map<string, number>();
  /** Which start of the plugin sent each call, numbered from 1 in the order they were made; beside calls. */
  readonly from: number[] = [];
  /** The virtual clock when each call came, beside calls. */
  readonly times: number[] = [];
  /** Each call's timeoutMs, beside calls: undefined is the connection's read timeout. */
  readonly timeouts: (number | undefined)[] = [];
  /** Keys a fenced lookup answered none for: an acquire of one is refused. */
  readonly fenced = new Set<string>();
  starts = 0;
  /** Starts ended by close() (the stop sequence) and by kill() (SIGKILL, as a killed mu leaves them). */
  closed = 0;
  killed = 0;
  /** Virtual: a wait for a machine to settle costs nothing. */
  clock = 0;
  private waiters: { at: number; wake: () => void }[] = [];

  constructor(readonly hooks: Hooks = {}) {}

  /** Resolves once a start's sleep has moved the clock to ms: an answer a hook holds back until then. */
  at(ms: number): Promise<void> {
    if (this.clock >= ms) return Promise.resolve();
    return new Promise((wake) => this.waiters.push({ at: ms, wake }));
  }

  private async advance(ms: number) {
    this.clock += ms;
    const due = this.waiters.filter((w) => w.at <= this.clock);
    this.waiters = this.waiters.filter((w) => w.at > this.clock);
    for (const w of due) w.wake();
    // Lets what waited on the clock answer before the sleeper goes on, as time passing would.
    await new Promise((r) => setImmediate(r));
  }

  dispose() {
    rmSync(this.home, { recursive: true, force: true });
  }

  /** The how-manieth call this is of `what` (a method and what it names), from 1. */
  protected nth(what: string): number {
    const n = (this.count.get(what) ?? 0) + 1;
    this.count.set(what, n);
    return n;
  }

  byHandle(handle: unknown): Machine | undefined {
    return [...this.machines.values()].find((m) => m.handle === handle);
  }

  /** The correct answer to a call, or a hook's; a subclass answers its own seam's methods and hands on the rest. */
  answer(method: string, params: Record<string, unknown>): unknown {
    const host = (params.target as { host: { handle?: string } }).host;
    const key = params.key as string;
    switch (method) {
      case "host.acquire": {
        const make = () => {
          let m = this.machines.get(key);
          if (!m) {
            const handle = `m${this.machines.size + 1}`;
            m = { key, handle, state: "up", dir: join(this.home, handle) };
            mkdirSync(m.dir);
            this.machines.set(key, m);
          }
          return m;
        };
        const asked = (params.params ?? {}) as Record<string, unknown>;
        if (this.fenced.has(key) && !this.hooks.acquire)
          throw refusal("host.acquire", "that key was fenced");
        return this.hooks.acquire
          ? this.hooks.acquire(key, asked, make)
          : { handle: make().handle };
      }
      case "host.release": {
        const m = this.machines.get(key);
        if (m) {
          m.state = "gone";
          if (!this.hooks.goneExec) rmSync(m.dir, { recursive: true, force: true });
        }
        return this.hooks.release ? this.hooks.release(key, this.nth(`release ${key}`)) : null;
      }
      case "host.status": {
        const m = this.byHandle(host.handle);
        if (this.hooks.status) return this.hooks.status(m, this.nth(`status ${host.handle}`));
        return { state: m?.state ?? "gone", handle: host.handle };
      }
      case "host.lookup": {
        const m = this.machines.get(key);
        // Kept even where a hook answers, so a late acquire can tell it was fenced.
        if (params.fence === true && !m) this.fenced.add(key);
        if (this.hooks.lookup) return this.hooks.lookup(key, m);
        // A released machine's key was still acquired once: found, never none.
        return m ? { found: { handle: m.handle } } : { none: true };
      }
      case "link.exec": {
        const m = this.byHandle(host.handle);
        const script = params.script as string;
        if (!m || m.state === "gone") {
          if (!this.hooks.goneExec) throw refusal("link.exec", "that machine is gone");
          return this.hooks.goneExec(script, m?.dir ?? this.home);
        }
        return (this.hooks.liveExec ?? sh)(script, m.dir);
      }
    }
    throw new Error(`the fake provider does not know ${method}`);
  }

  session(): Session {
    const start = ++this.starts;
    const fake = {
      hello: { instance: INSTANCE },
      proc: { conn: { state: this.hooks.conn ?? "open" } },
      now: () => this.clock,
      sleep: (ms: number) => this.advance(ms),
      call: async (method: string, params: Record<string, unknown>, timeoutMs?: number) => {
        this.calls.push({ method, params });
        this.from.push(start);
        this.times.push(this.clock);
        this.timeouts.push(timeoutMs);
        return this.answer(method, params);
      },
      again: async () => this.session(),
      kill: async () => {
        this.killed++;
      },
      close: async () => {
        this.closed++;
      },
    };
    return fake as unknown as Session;
  }

  /** Each machine's state, in the order they were made. */
  states(): string[] {
    return [...this.machines.values()].map((m) => m.state);
  }
}

export const checkContext = (): RunContext =>
  ({ runId: "r1", made: nothingMade() }) as unknown as RunContext;

/** The CheckFailed a check ends with; fails the test if it ends any other way. */
export async function failure(p: Promise<unknown>): Promise<CheckFailed> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(CheckFailed);
  return err as CheckFailed;
}

/** make, with each fake it made disposed of after the test (its temp directory removed). */
export function perTest<A extends unknown[], T extends { dispose(): void }>(
  make: (...a: A) => T,
): (...a: A) => T {
  const made: T[] = [];
  afterEach(() => {
    for (const x of made.splice(0)) x.dispose();
  });
  return (...a) => {
    const x = make(...a);
    made.push(x);
    return x;
  };
}

import {
  appendFileSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";

// The simulated world: a directory that outlives every plugin and mu
// process of a scenario. world.json is what the scenario sets (declaration,
// instance, faults); state.json is what the plugin keeps (call and effect
// counters, which one-shot faults fired); transcript.ndjson is every message
// in and out. The effect counters are the ground truth for "nothing was done
// twice".

export type InvalidKind =
  | "not-json"
  | "unknown-field"
  | "bad-utf8"
  | "oversize"
  | "reply-to-none"
  | "request-to-mu";

export type Action =
  | { delayMs: number }
  | {
      error: {
        kind: "retryable" | "permanent" | "human" | "unknown-outcome";
        message?: string;
        remedy?: string;
      };
    }
  | { hang: true }
  | { invalid: InvalidKind }
  | { replyTwice: true }
  | { crash: "before" | "after" }
  | { killMu: "before" | "after" }
  | { ignoreEof: true }
  | { setInstance: string }
  | { advanceClockMs: number }
  | { stderr: string }
  | { setsidHelper: true }
  | { leakCanary: "stderr" | "reply" }
  | { reply: unknown }
  /** On a channel.watch: when mu cancels it, send watch/settled anyway, crossing the cancel. */
  | { settleOnCancel: true }
  /** Answer as usual, then die this many ms later, as a plugin that crashes mid-watch. */
  | { exitAfterMs: number }
  // Broken variants the contract suite must catch (sim/plugin/misbehave.ts).
  | { execIgnoresTimeout: true }
  | { releaseErrorsWhenGone: true };

export interface Fault {
  on: string;
  /** The 1-based number of the call to this method, over the world's life. */
  call?: number;
  /** Only calls whose params hold these values, by dotted path ("target.agent.name": "a"). */
  match?: Record<string, unknown>;
  times?: "once" | "always";
  do: Action;
}

export interface WorldConfig {
  preset: string;
  instance: string;
  /** Deep-merged over the whole handshake answer (seams, name, schema…); a null removes the key. */
  hello?: Record<string, unknown>;
  faults?: Fault[];
  clockOffsetMs?: number;
  /** How long an agent's turn takes, in world time (default 300 ms). */
  turnMs?: number;
}

export interface SimHost {
  handle: string;
  released: boolean;
}

export interface SimView {
  command: string;
  env: Record<string, string>;
}

export interface SimJob {
  key: string;
  handle: string;
  agent: string;
  state: "running" | "ended";
  exit?: number | null;
  /** The start's whole reply, which a lookup of a reply kind repeats. */
  reply: Record<string, unknown>;
}

export interface SimTurn {
  text: string;
  msgId?: string;
  endsAt: number;
}

export interface SimAgent {
  incarnation: number;
  runs: number;
  since: number;
  /** The running turn first, then the queued ones. */
  turns: SimTurn[];
  lastText?: string;
  /** Settled turns: runs after it, its text, when. */
  settled: { runs: number; text: string; at: number }[];
  /** Deliveries by msgId: the run count before their turn, and when taken. */
  receipts: Record<string, { runs: number; at: number; incarnation: number }>;
  /** A dialog waiting for a person (answer clears it). */
  blocked?: string;
}

export interface WorldState {
  calls: Record<string, number>;
  /** "<method>:<key>" → how many times the effect was really applied. */
  effects: Record<string, number>;
  fired: number[];
  /** Provider hosts by acquire key. */
  hosts?: Record<string, SimHost>;
  /** Dedupe records by key: the params' hash, the first result and when. */
  dedupe?: Record<string, { sha: string; result: unknown; at: number }>;
  /** Jobs by start key. */
  jobs?: Record<string, SimJob>;
  /** Agents' channel sessions by "<workstream>/<name>". */
  agents?: Record<string, SimAgent>;
  /** Link calls running now on each machine, and the most ever at once. */
  sessions?: Record<string, { active: number; peak: number }>;
}

function writeJson(path: string, value: unknown): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
  renameSync(tmp, path);
}

export class World {
  constructor(readonly dir: string) {}

  static create(dir: string, config: WorldConfig): World {
    mkdirSync(dir, { recursive: true });
    const w = new World(dir);
    w.setConfig(config);
    if (!existsSync(join(dir, "state.json")))
      writeJson(join(dir, "state.json"), { calls: {}, effects: {}, fired: [] });
    return w;
  }

  config(): WorldConfig {
    return JSON.parse(readFileSync(join(this.dir, "world.json"), "utf8")) as WorldConfig;
  }

  setConfig(c: WorldConfig): void {
    writeJson(join(this.dir, "world.json"), c);
  }

  state(): WorldState {
    try {
      return JSON.parse(readFileSync(join(this.dir, "state.json"), "utf8")) as WorldState;
    } catch {
      return { calls: {}, effects: {}, fired: [] };
    }
  }

  /**
   * Read-modify-write of state.json under a lock file: two mu invocations can
   * each run a sim process on one world at once, and an effect counter that
   * lost an update would hide the very double effect it exists to count.
   */
  update(fn: (s: WorldState) => void): WorldState {
    const lock = join(this.dir, "state.lock");
    const started = Date.now();
    for (;;) {
      try {
        closeSync(openSync(lock, "wx"));
        break;
      } catch {
        // A holder that died (SIGKILLed by its own fault script) leaves its
        // lock; no update takes anywhere near this long.
        if (Date.now() - started > 2_000) rmSync(lock, { force: true });
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
      }
    }
    try {
      const s = this.state();
      fn(s);
      writeJson(join(this.dir, "state.json"), s);
      return s;
    } finally {
      rmSync(lock, { force: true });
    }
  }

  now(): number {
    return Date.now() + (this.config().clockOffsetMs ?? 0);
  }

  record(dir: "in" | "out" | "note", msg: unknown): void {
    appendFileSync(
      join(this.dir, "transcript.ndjson"),
      `${JSON.stringify({ t: Date.now(), dir, pid: process.pid, msg })}\n`,
    );
  }

  transcript(): { t: number; dir: string; pid: number; msg: Record<string, unknown> }[] {
    const p = join(this.dir, "transcript.ndjson");
    if (!existsSync(p)) return [];
    return readFileSync(p, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  }
}

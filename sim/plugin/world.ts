import * as nodeFs from "node:fs";
import { join } from "node:path";
import type { PluginSession } from "../trace/read.js";
import type { Fault } from "./fault-types.js";
import { withLock } from "./world-lock.js";

// The simulated world: a directory that outlives every plugin and mu
// process of a scenario. world.json is what the scenario sets (declaration,
// instance, faults); state.json is what the plugin keeps (call and effect
// counters, which one-shot faults fired); transcript.ndjson is every message
// in and out. The effect counters are the ground truth for "nothing was done
// twice".

export interface WorldConfig {
  preset: string;
  instance: string;
  /** Deep-merged over the whole handshake answer (seams, name, schema…); a null removes the key. */
  hello?: Record<string, unknown>;
  faults?: Fault[];
  clockOffsetMs?: number;
  /** Hold faults let go by name. */
  released?: string[];
  /** How long an agent's turn takes, in world time (default 300 ms). */
  turnMs?: number;
  /** Recorded plugin processes (from a mu trace): each new process plays the next one. */
  replay?: { content?: boolean; sessions: PluginSession[] };
  /** A real plugin's argv: the sim stands in front of it and applies the faults on the way. */
  proxy?: string[];
}

export interface SimHost {
  handle: string;
  released: boolean;
  /** The instance the handshake named when the machine was made. */
  instance?: string;
  /** Gone by the provider's doing (loseHost), not released by mu. */
  lost?: boolean;
  /** The pid of the plugin process that made it. */
  by?: number;
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
  /** The instance the handshake named when the job was started. */
  instance?: string;
  /** The handle of the machine it was started on, if it was started on one. */
  host?: string;
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
  /** The error the last turn ended with, if it failed. */
  lastError?: string;
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
  /**
   * The once faults that fired, each as its place in the list and itself:
   * a world step that puts a new fault where a fired one was arms it, while
   * one that states the same fault again leaves it fired.
   */
  fired: string[];
  /** Provider hosts by acquire key. */
  hosts?: Record<string, SimHost>;
  /** Dedupe records by key: the params' hash, the first result and when. */
  dedupe?: Record<string, { sha: string; result: unknown; at: number }>;
  /** When a call for each dedupe key first arrived at any sim process (sim/plugin/dedupe.ts). */
  keyArrived?: Record<string, number>;
  /**
   * Keys a fenced lookup answered none for ("job:<key>", "host:<key>"): a
   * start or acquire of one arriving later makes nothing and is refused.
   */
  fenced?: Record<string, number>;
  /** Jobs by start key. */
  jobs?: Record<string, SimJob>;
  /** Agents' channel sessions by "<workstream>/<name>". */
  agents?: Record<string, SimAgent>;
  /** Link calls running now on each machine, and the most ever at once. */
  sessions?: Record<string, { active: number; peak: number }>;
  /** How many plugin processes have taken a recorded session to replay. */
  replayed?: number;
  /** The instance a proxy's setInstance fault makes the real plugin's handshake name. */
  proxyInstance?: string;
  /** Plugin processes that, told to stop, finished winding down and exited by themselves. */
  cleanExits?: number;
}

/** The file calls the world makes: node's own, or memfs's in the virtual engine. */
export type WorldFs = Pick<
  typeof nodeFs,
  | "appendFileSync"
  | "closeSync"
  | "existsSync"
  | "mkdirSync"
  | "openSync"
  | "readFileSync"
  | "renameSync"
  | "rmSync"
  | "writeFileSync"
  | "writeSync"
>;

export class World {
  constructor(
    readonly dir: string,
    private readonly fs: WorldFs = nodeFs,
    /** Real time, or the virtual engine's; the world's clock offset adds to it. */
    private readonly clock: () => number = Date.now,
  ) {}

  static create(dir: string, config: WorldConfig, fs: WorldFs = nodeFs, clock = Date.now): World {
    fs.mkdirSync(dir, { recursive: true });
    const w = new World(dir, fs, clock);
    w.setConfig(config);
    if (!fs.existsSync(join(dir, "state.json")))
      w.writeJson(join(dir, "state.json"), { calls: {}, effects: {}, fired: [] });
    return w;
  }

  private writeJson(path: string, value: unknown): void {
    const tmp = `${path}.tmp-${process.pid}`;
    this.fs.writeFileSync(tmp, `${JSON.stringify(value, null, 2)}\n`);
    this.fs.renameSync(tmp, path);
  }

  config(): WorldConfig {
    return JSON.parse(
      String(this.fs.readFileSync(join(this.dir, "world.json"), "utf8")),
    ) as WorldConfig;
  }

  setConfig(c: WorldConfig): void {
    this.writeJson(join(this.dir, "world.json"), c);
  }

  state(): WorldState {
    try {
      return JSON.parse(
        String(this.fs.readFileSync(join(this.dir, "state.json"), "utf8")),
      ) as WorldState;
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
    return withLock(this.fs, join(this.dir, "state.lock"), () => {
      const s = this.state();
      fn(s);
      this.writeJson(join(this.dir, "state.json"), s);
      return s;
    });
  }

  /** A file of the world's directory, or null when it is not there. */
  readFile(name: string): string | null {
    const p = join(this.dir, name);
    return this.fs.existsSync(p) ? String(this.fs.readFileSync(p, "utf8")) : null;
  }

  now(): number {
    return this.clock() + (this.config().clockOffsetMs ?? 0);
  }

  record(dir: "in" | "out" | "note", msg: unknown): void {
    this.fs.appendFileSync(
      join(this.dir, "transcript.ndjson"),
      `${JSON.stringify({ t: this.clock(), dir, pid: process.pid, msg })}\n`,
    );
  }

  transcript(): { t: number; dir: string; pid: number; msg: Record<string, unknown> }[] {
    const p = join(this.dir, "transcript.ndjson");
    if (!this.fs.existsSync(p)) return [];
    // A plugin process may be appending as this reads: a write into a file is
    // not seen whole, so a last line without its newline is still being
    // written and is not part of the transcript yet.
    const lines = String(this.fs.readFileSync(p, "utf8")).split("\n");
    return lines
      .slice(0, -1)
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  }
}

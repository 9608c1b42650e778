import { spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { realLiveness } from "../../host/ports/real.js";

// What the sim plugin does to the process it runs in. The executable wires
// the real one (stdio, exit, a SIGKILL to its parent); the virtual engine
// wires one over in-memory streams, so the same protocol loop runs
// in-process on virtual time.

export interface SimIo {
  /** The plugin process's pid: the real one, or its entry in the virtual engine's table. */
  pid: number;
  out(line: string | Buffer): void;
  err(text: string | Buffer): void;
  /** Ends the plugin process. */
  exit(code: number): void;
  /** Kills mu, the plugin's parent, with SIGKILL (a fault). */
  killParent(): void;
  /** Keeps running past stdin's end and SIGTERM (a fault): only a group kill ends it. */
  ignoreTermination(): void;
  /** Closes the plugin's end of its stdin (a fault): mu's next write fails. */
  closeInput?(): void;
  env: Readonly<Record<string, string | undefined>>;
  /** Calls fn after ms of the plugin's time: the machine's, or the virtual engine's. */
  setTimer(ms: number, fn: () => void): { cancel(): void };
  /** True while the process lives (a view the sim's job watches). */
  alive(pid: number): boolean;
  /**
   * Starts a helper in this process's group that holds its stdout and stderr
   * and ignores SIGTERM and stdin's end; it exits by itself only after
   * lingerMs (never, when absent). Returns its pid.
   */
  startHelper(lingerMs?: number): number;
  /** Closes stdout and stderr for good; the process runs on and reads stdin. */
  closeOut(): void;
  /**
   * Waits for the virtual engine's scheduler to let this process go on: the
   * machine's scripts (git among them) start and end only on a turn. Absent
   * for a real process, whose scripts run when they run.
   */
  turn?(at: "start" | "end"): Promise<void>;
}

/** Set once the sim closed its stdout (closeStdout): nothing more is written. */
let outClosed = false;

export const processIo: SimIo = {
  pid: process.pid,
  out: (line) => {
    if (!outClosed) process.stdout.write(line);
  },
  err: (text) => {
    if (!outClosed) process.stderr.write(text);
  },
  exit: (code) => process.exit(code),
  killParent: () => process.kill(process.ppid, "SIGKILL"),
  ignoreTermination: () => {
    process.on("SIGTERM", () => {});
    setInterval(() => {}, 60_000);
  },
  closeInput: () => {
    process.stdin.destroy();
    // Node (libuv) never closes fd 0 itself, so without this the pipe stays
    // open and mu's writes still succeed; /dev/null takes the descriptor over.
    closeSync(0);
    openSync("/dev/null", "r");
  },
  env: process.env,
  setTimer(ms, fn) {
    const t = setTimeout(fn, ms);
    return { cancel: () => clearTimeout(t) };
  },
  // mu's own reading of /proc: a zombie counts as ended.
  alive: (pid) => realLiveness.startOf(pid) !== null,
  startHelper(lingerMs) {
    const secs = lingerMs === undefined ? 3600 : lingerMs / 1000;
    // An ignored signal stays ignored across exec, so sleep keeps the trap.
    const child = spawn("/bin/sh", ["-c", `trap '' TERM HUP INT; exec sleep ${secs}`], {
      stdio: ["ignore", "inherit", "inherit"],
    });
    child.unref();
    return child.pid ?? 0;
  },
  closeOut() {
    outClosed = true;
    // Node never closes its own stdio streams: close the pipes' descriptors
    // under them, each taken over at once by /dev/null (the lowest free
    // descriptor), so no file the sim opens later lands on 1 or 2.
    for (const fd of [1, 2]) {
      closeSync(fd);
      openSync("/dev/null", "w");
    }
  },
};

/**
 * The line loop: messages are handled one at a time, in order, as a plain
 * plugin would; shutdown and a watch's cancel are acted on at once, so they
 * never wait behind a delayed call.
 */
export class SimSession {
  private queue = Promise.resolve();
  private buf = "";

  constructor(
    private readonly sim: {
      handle(msg: never): Promise<void>;
      heard?(msg: Record<string, unknown>): void;
      onEof(): void;
      /** Told at once, not behind the queue: what runs now must not hold the exit up. */
      cancelInFlight?(): void;
      channel: { cancelWatch(id: string): void };
    },
    private readonly record: (dir: "in" | "note", msg: unknown) => void,
    private readonly io: SimIo,
  ) {}

  feed(chunk: string): void {
    this.buf += chunk;
    for (let nl = this.buf.indexOf("\n"); nl !== -1; nl = this.buf.indexOf("\n")) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line);
      } catch {
        this.record("note", { unparseable: line.slice(0, 200) });
        continue;
      }
      this.record("in", msg);
      this.sim.heard?.(msg);
      if (msg.method === "$/cancel") {
        const watchId = (msg.params as { watchId?: unknown } | undefined)?.watchId;
        if (typeof watchId === "string") this.sim.channel.cancelWatch(watchId);
        continue;
      }
      if (msg.method === "shutdown") {
        void this.sim.handle(msg as never);
        continue;
      }
      this.queue = this.queue
        .then(() => this.sim.handle(msg as never))
        .catch((err: unknown) => {
          this.io.err(`mu-plugin-sim: ${(err as Error).message}\n`);
        });
    }
  }

  end(): void {
    this.sim.cancelInFlight?.();
    void this.queue.then(() => this.sim.onEof());
  }
}

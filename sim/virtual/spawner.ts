import { basename } from "node:path";
import type { ChildProcess, ProcessSpawner } from "../../host/ports/types.js";
import { replayFromWorld } from "../plugin/replay.js";
import { SimPlugin } from "../plugin/serve.js";
import { type SimIo, SimSession } from "../plugin/sim-io.js";
import { World, type WorldFs } from "../plugin/world.js";
import { PluginGroup } from "./plugin-group.js";
import type { VirtualClock, VirtualProcesses } from "./ports.js";

// Starting a plugin in the virtual engine: the sim's own protocol loop runs
// in this process, its stdin and stdout are in-memory, its pid is an entry in
// the process table, and its world lives on the engine's in-memory files. mu's
// supervisor, connection and stop sequence run unchanged on top.

export function virtualSpawner(
  processes: VirtualProcesses,
  clock: VirtualClock,
  worldFs: WorldFs,
  /** What a plugin's killMu fault does: SIGKILL the mu that started it. */
  killParent: () => void = () => {
    throw new Error("this virtual spawner has no mu to kill");
  },
  /** Hears each message a plugin receives, as the world records it. */
  onReceived: (msg: Record<string, unknown>) => void = () => {},
  /** Every plugin group this spawner starts, for the checks on what outlives mu. */
  groups: PluginGroup[] = [],
  /** Whether exec may run this file (an install step's mode). */
  mayExec: (file: string) => boolean = () => true,
): ProcessSpawner {
  return {
    async spawn(argv, opts): Promise<ChildProcess> {
      const [file = ""] = argv;
      // As Node's spawn reports a file without an execute bit.
      if (!mayExec(file))
        throw Object.assign(new Error(`spawn ${file} EACCES`), { code: "EACCES" });
      if (!basename(file).startsWith("mu-plugin-sim")) {
        throw Object.assign(new Error(`the virtual engine runs only mu-plugin-sim, not ${file}`), {
          code: "ENOENT",
        });
      }
      const at = argv.indexOf("--world");
      const worldDir = at === -1 ? undefined : argv[at + 1];
      if (!worldDir) throw new Error("mu-plugin-sim: --world DIR is required");
      const group = new PluginGroup(processes, clock);
      groups.push(group);
      const pid = group.pgid;
      const stdout: ((c: Uint8Array) => void)[] = [];
      const stderr: ((c: Uint8Array) => void)[] = [];
      // Delivered a microtask later, in order, as bytes from a pipe would be:
      // what the plugin wrote in one go arrives as one chunk, as a pipe's
      // read returns all that is buffered (a reply and a line behind it).
      const queued = new Map<((c: Uint8Array) => void)[], Buffer[]>();
      const deliver = (fns: ((c: Uint8Array) => void)[], text: string | Buffer) => {
        const waiting = queued.get(fns);
        if (waiting) return void waiting.push(Buffer.from(text));
        queued.set(fns, [Buffer.from(text)]);
        queueMicrotask(() => {
          const bytes = Buffer.concat(queued.get(fns) ?? []);
          queued.delete(fns);
          for (const f of fns) f(bytes);
        });
      };
      // A stdin the plugin closed itself: the first write after it is taken
      // and fails a moment later with EPIPE, as the pipe's error event comes
      // after the write that met it; later writes are dropped; the plugin
      // sees no end of it.
      let selfClosedInput = false;
      let inputBroken = false;
      let inputError: ((code: string) => void) | undefined;
      const io: SimIo = {
        pid,
        out: (line) => {
          if (group.leaderAlive && group.leaderWrites) deliver(stdout, line);
        },
        err: (text) => {
          if (group.leaderAlive && group.leaderWrites) deliver(stderr, text);
        },
        closeOut: () => group.closeLeaderOutput(),
        // The sim closes its own stdin (closeStdin): mu's next write meets EPIPE.
        closeInput: () => {
          selfClosedInput = true;
        },
        exit: (code) => group.exitLeader(code),
        killParent,
        // Only the group's SIGKILL ends it then: stdin's end is ignored by the sim itself.
        ignoreTermination: () => group.leaderIgnoresTerm(),
        env: opts.env,
        // A plugin's timers end with it.
        setTimer: (ms, fn) =>
          clock.setTimer(ms, () => {
            if (group.leaderAlive) fn();
          }),
        alive: (p) => processes.startOf(p) !== null,
        startHelper: (lingerMs) => group.startHelper(lingerMs),
        // In an interleaved run the machine's scripts (git's fetches among
        // them) start and end on the scheduler's turns, as mu's disk
        // operations do: one runs at a time, in the seed's order. A script's
        // end is its child's doing, not a run of the plugin's own that the
        // scheduler would rather let go on: it waits as a process of its own.
        turn: clock.interleaver
          ? (at) => clock.interleaver?.turn(at === "start" ? pid : -pid) ?? Promise.resolve()
          : undefined,
      };
      const world = new World(worldDir, worldFs, () => clock.now());
      const session =
        replayFromWorld(world, io) ??
        new SimSession(
          new SimPlugin(world, io),
          (dir, msg) => {
            world.record(dir, msg);
            if (dir === "in") onReceived(msg as Record<string, unknown>);
          },
          io,
        );
      // mu's end of the plugin's stdin, once closed, carries nothing more (as
      // the real spawner drops a write after it).
      let inputEnded = false;
      return {
        pid,
        write(bytes) {
          if (!group.leaderAlive || inputEnded || inputBroken) return false;
          if (selfClosedInput) {
            inputBroken = true;
            queueMicrotask(() => inputError?.("EPIPE"));
            return true;
          }
          session.feed(Buffer.from(bytes).toString("utf8"));
          return true;
        },
        closeInput() {
          if (inputEnded) return;
          inputEnded = true;
          if (group.leaderAlive && !selfClosedInput) session.end();
        },
        onInputError: (fn) => {
          inputError = fn;
        },
        onStdout: (fn) => {
          stdout.push(fn);
        },
        onStderr: (fn) => {
          stderr.push(fn);
        },
        onStdoutEnd: (fn) => group.onOutputEnd(fn),
        exited: group.exited,
        killGroup: (signal) => group.kill(signal),
      };
    },
  };
}

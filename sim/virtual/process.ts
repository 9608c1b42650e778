import type {
  ChildProcess,
  Clock,
  FileHandle,
  FileSystem,
  Ports,
  ProcessId,
  ProcessSpawner,
} from "../../host/ports/types.js";
import type { Interleaver } from "./interleave.js";
import type { VirtualProcesses } from "./ports.js";

// One mu invocation of the virtual engine, as a process that can die. Its
// ports are the world's, behind a gate: from the moment it dies (a crash
// point, or a plugin's fault that SIGKILLs it) no disk operation of it
// returns, no timer of it fires, no byte from its plugins reaches it and none
// it writes leaves. That is what SIGKILL means between two system calls: what
// was written stays written (a killed process is not a power cut), and
// nothing after it happens. Its pid leaves the table, so its locks and
// intents read as a dead writer's, and its plugins see their stdin close.

const never = new Promise<never>(() => {});

export class VirtualMu {
  readonly id: ProcessId;
  private dead = false;
  /** What a pipe callback of mu threw, if that ended it (Node's uncaught exception). */
  uncaught: Error | undefined;
  private readonly children: ChildProcess[] = [];
  private announce: () => void = () => {};
  /** Settles when the process dies. */
  readonly died = new Promise<void>((done) => {
    this.announce = done;
  });

  constructor(
    private readonly processes: VirtualProcesses,
    /** The run's seeded scheduler: each operation of this process waits for its turn. */
    private readonly sched?: Interleaver,
  ) {
    this.id = processes.start();
  }

  get alive(): boolean {
    return !this.dead;
  }

  /** SIGKILL: the process leaves the table and its pipes close. */
  kill(): void {
    if (this.dead) return;
    this.dead = true;
    this.processes.end(this.id.pid);
    for (const c of this.children) c.closeInput();
    this.announce();
  }

  /**
   * A callback of mu's threw with nothing to catch it: Node prints the error
   * and exits 1, with no finally run and its plugins' pipes closed, as a kill.
   */
  crashUncaught(err: unknown): void {
    if (this.dead) return;
    this.uncaught = err instanceof Error ? err : new Error(String(err));
    this.kill();
  }

  /** The process ends normally. */
  exit(): void {
    this.processes.end(this.id.pid);
  }

  private gate<T>(op: () => Promise<T>): Promise<T> {
    if (this.dead) return never;
    if (this.sched) {
      const sched = this.sched;
      return sched.turn(this.id.pid).then(() => this.ungated(op));
    }
    return this.ungated(op);
  }

  private ungated<T>(op: () => Promise<T>): Promise<T> {
    if (this.dead) return never;
    return op().then(
      (v) => (this.dead ? never : v),
      (err) => (this.dead ? never : Promise.reject(err)),
    );
  }

  /** The world's ports as seen by this process. */
  ports(base: Ports): Ports {
    const liveness = base.liveness;
    return {
      ...base,
      clock: this.clock(base.clock),
      fs: this.fs(base.fs),
      spawner: this.spawner(base.spawner),
      liveness: {
        self: () => this.id,
        startOf: (pid) => liveness.startOf(pid),
        alive: (id) => liveness.alive(id),
        groupEmpty: (pgid) => liveness.groupEmpty(pgid),
      },
      // The crashed call stack stops where it stands: nothing unwinds, no
      // finally runs, as nothing runs after a SIGKILL.
      crash: () => {
        this.kill();
        return never;
      },
    };
  }

  private clock(base: Clock): Clock {
    return {
      now: () => base.now(),
      // Woken, it waits for its turn again, as another may be ready too.
      sleep: (ms) =>
        this.sched
          ? this.gate(() => base.sleep(ms)).then(() => this.gate(async () => {}))
          : this.gate(() => base.sleep(ms)),
      setTimer: (ms, fn) => {
        let cancelled = false;
        const t = base.setTimer(ms, () => {
          if (this.dead) return;
          if (!this.sched) return fn();
          // Cancelled while it waited for its turn: as if it never fired.
          void this.sched.turn(this.id.pid).then(() => {
            if (!cancelled && !this.dead) fn();
          });
        });
        return {
          cancel: () => {
            cancelled = true;
            t.cancel();
          },
        };
      },
    };
  }

  private fs(base: FileSystem): FileSystem {
    const handle = (h: FileHandle): FileHandle => ({
      write: (data) => this.gate(() => h.write(data)),
      sync: () => this.gate(() => h.sync()),
      close: () => this.gate(() => h.close()),
    });
    return {
      stat: (p) => this.gate(() => base.stat(p)),
      readFile: (p) => this.gate(() => base.readFile(p)),
      readHead: (p, n) => this.gate(() => base.readHead(p, n)),
      open: (p, o) => this.gate(async () => handle(await base.open(p, o))),
      rename: (a, b) => this.gate(() => base.rename(a, b)),
      unlink: (p) => this.gate(() => base.unlink(p)),
      mkdirp: (p, m) => this.gate(() => base.mkdirp(p, m)),
      syncDir: (p) => this.gate(() => base.syncDir(p)),
      readdir: (p) => this.gate(() => base.readdir(p)),
    };
  }

  private spawner(base: ProcessSpawner): ProcessSpawner {
    return {
      spawn: (argv, opts) =>
        this.gate(async () => {
          const c = await base.spawn(argv, opts);
          this.children.push(c);
          const live =
            <A extends unknown[]>(fn: (...a: A) => void) =>
            (...a: A) => {
              if (this.dead) return;
              try {
                fn(...a);
              } catch (err) {
                this.crashUncaught(err);
              }
            };
          return {
            pid: c.pid,
            write: (bytes) => !this.dead && c.write(bytes),
            closeInput: () => {
              if (!this.dead) c.closeInput();
            },
            onStdout: (fn) => c.onStdout(live(fn)),
            onStderr: (fn) => c.onStderr(live(fn)),
            onStdoutEnd: (fn) => c.onStdoutEnd(live(fn)),
            onInputError: (fn) => c.onInputError?.(live(fn)),
            exited: c.exited.then((s) => (this.dead ? never : s)),
            killGroup: (signal) => {
              if (!this.dead) c.killGroup(signal);
            },
          };
        }),
    };
  }
}

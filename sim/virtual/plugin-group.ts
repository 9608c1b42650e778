import type { ExitStatus } from "../../host/ports/types.js";
import type { VirtualClock, VirtualProcesses } from "./ports.js";

// A virtual plugin's process group: the leader (the sim) and the helpers it
// started, each an entry in the engine's table under the leader's pgid. Every
// member holds the group's stdout and stderr, so mu reads their end only once
// the last member is gone or closed them, as from real pipes a helper inherited. The leader's
// exit is what `exited` reports; a SIGKILL of the group ends every member, a
// SIGTERM only those that do not ignore it.

export class PluginGroup {
  readonly pgid: number;
  /** Live members, by pid: whether each ignores SIGTERM. */
  private readonly members = new Map<number, { ignoresTerm: boolean }>();
  /** Members whose stdout and stderr are still open. */
  private readonly holders = new Set<number>();
  private readonly ends: (() => void)[] = [];
  private settle: (s: ExitStatus) => void = () => {};
  readonly exited = new Promise<ExitStatus>((done) => {
    this.settle = done;
  });

  constructor(
    private readonly processes: VirtualProcesses,
    private readonly clock: VirtualClock,
  ) {
    this.pgid = processes.start().pid;
    this.members.set(this.pgid, { ignoresTerm: false });
    this.holders.add(this.pgid);
  }

  /** Whether the leader can still write to mu. */
  get leaderWrites(): boolean {
    return this.holders.has(this.pgid);
  }

  /** The leader closes its stdout and stderr but runs on (the sim's closeStdout). */
  closeLeaderOutput(): void {
    if (this.release(this.pgid)) queueMicrotask(() => this.endOutput());
  }

  get leaderAlive(): boolean {
    return this.members.has(this.pgid);
  }

  /** Pids of the members still running. */
  live(): number[] {
    return [...this.members.keys()];
  }

  onOutputEnd(fn: () => void): void {
    this.ends.push(fn);
  }

  /** The leader traps SIGTERM from now on (the sim's ignoreEof). */
  leaderIgnoresTerm(): void {
    const m = this.members.get(this.pgid);
    if (m) m.ignoresTerm = true;
  }

  /** The leader exits with `code`, or dies by `signal` as Node reports it; its helpers run on. */
  exitLeader(code: number | null, signal: string | null = null): void {
    if (!this.leaderAlive) return;
    this.end(this.pgid, () => this.settle({ code, signal }));
  }

  /** A helper that ignores SIGTERM and stdin's end; after lingerMs it exits by itself. */
  startHelper(lingerMs?: number): number {
    const { pid } = this.processes.start(this.pgid);
    this.members.set(pid, { ignoresTerm: true });
    this.holders.add(pid);
    if (lingerMs !== undefined) this.clock.setTimer(lingerMs, () => this.end(pid));
    return pid;
  }

  /** kill(-pgid, signal), as the real spawner sends it. */
  kill(signal: string): void {
    // What process.kill does with a name it does not know.
    if (signal !== "SIGKILL" && signal !== "SIGTERM")
      throw Object.assign(new TypeError(`Unknown signal: ${signal}`), {
        code: "ERR_UNKNOWN_SIGNAL",
      });
    for (const [pid, m] of [...this.members]) {
      if (signal === "SIGTERM" && m.ignoresTerm) continue;
      if (pid === this.pgid) this.exitLeader(null, signal);
      else this.end(pid);
    }
  }

  /** A member leaves the table; the pipes end with the last one, a microtask later. */
  private end(pid: number, then?: () => void): void {
    if (!this.members.delete(pid)) return;
    this.processes.end(pid);
    const last = this.release(pid);
    queueMicrotask(() => {
      if (last) this.endOutput();
      then?.();
    });
  }

  /** True when `pid` held the pipes and was the last to. */
  private release(pid: number): boolean {
    return this.holders.delete(pid) && this.holders.size === 0;
  }

  private endOutput(): void {
    for (const f of this.ends) f();
  }
}

/** What of `groups` still runs, as one line, or nothing. */
export function stillRunning(groups: PluginGroup[]): string[] {
  const live = groups.flatMap((g) => g.live());
  return live.length > 0 ? [`but plugin process ${live.join(", ")} of it still runs`] : [];
}

/**
 * Plugin processes still running once a scenario's steps are done, after the
 * second the real runner gives a plugin that is exiting on its stdin's end.
 */
export async function leftBehind(
  clock: VirtualClock,
  groups: PluginGroup[],
): Promise<string | undefined> {
  const live = () => groups.flatMap((g) => g.live());
  if (live().length > 0) await clock.advance(1_000);
  const left = live();
  return left.length > 0 ? `left processes behind: plugin process ${left.join(", ")}` : undefined;
}

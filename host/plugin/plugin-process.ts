import type { ChildProcess, Ports } from "../ports/types.js";
import { Redactor } from "../trace/redact.js";
import { Connection, type StopCause } from "./connection.js";
import { pluginEnv } from "./plugin-env.js";
import { FirstLine, STDERR_LINE_MAX } from "./stderr-line.js";

// One running plugin: the child, its group, its connection, and the one stop
// sequence every stop goes through.

export const GRACE_MS = 5_000;
const POLL_MS = 20;

export type ProcessState = "running" | "stopping" | "stopped";

export interface StopRecord {
  cause: StopCause | "normal" | "signal";
  detail: string;
  /** The group did not empty within the grace and was killed. */
  forced: boolean;
}

export interface ResultChecks {
  checkResult?(method: string, result: unknown): string | null;
  checkNotification?(method: string, params: unknown): string | null;
}

export class PluginProcess {
  state: ProcessState = "running";
  readonly conn: Connection;
  private stopping: Promise<StopRecord> | undefined;
  private readonly secrets: Redactor;
  private readonly stderr: FirstLine;
  private leaderGone = false;

  private constructor(
    private readonly ports: Ports,
    readonly name: string,
    readonly child: ChildProcess,
    checks: ResultChecks,
    private readonly onStopped: (p: PluginProcess, r: StopRecord) => void,
  ) {
    // The plugin inherits mu's environment, so it can print any secret in it.
    this.secrets = new Redactor(ports.env, false);
    // Held past the shown cut by the longest secret, so one across the cut is whole when masked.
    this.stderr = new FirstLine(STDERR_LINE_MAX + this.secrets.longest);
    this.conn = new Connection({
      write: (b) => child.write(b),
      clock: ports.clock,
      mask: (text) => this.secrets.mask(text),
      ...checks,
      onStop: (cause, detail) => {
        void this.stop(cause, detail);
      },
    });
    child.onStdout((c) => this.conn.feed(c));
    child.onStdoutEnd(() => this.conn.end());
    child.onInputError?.((code) => this.conn.inputLost(code));
    child.onStderr((c) => this.stderr.push(c));
    void child.exited.then(() => {
      this.leaderGone = true;
      // The group, not the leader, is what mu tracks: whatever the leader left
      // behind is killed at once.
      if (!ports.liveness.groupEmpty(child.pid)) child.killGroup("SIGKILL");
      if (this.state === "running") void this.stop("exited", "the plugin exited");
    });
  }

  static async start(
    ports: Ports,
    name: string,
    argv: readonly string[],
    checks: ResultChecks,
    onStopped: (p: PluginProcess, r: StopRecord) => void,
  ): Promise<PluginProcess> {
    const child = await ports.spawner.spawn(argv, { env: pluginEnv(ports.env), cwd: ports.cwd });
    return new PluginProcess(ports, name, child, checks, onStopped);
  }

  get pgid(): number {
    return this.child.pid;
  }

  /** The plugin's first stderr line, masked and cut to 400 characters, for error messages. */
  get stderrLine(): string | undefined {
    const line = this.stderr.line;
    if (line === undefined) return undefined;
    const masked = this.stderr.whole ? this.secrets.mask(line) : this.secrets.maskCut(line);
    return masked.slice(0, STDERR_LINE_MAX);
  }

  /**
   * The stop sequence: $/cancel each pending call, shutdown, close stdin,
   * wait at most one grace for the group to empty, kill the group. Callers
   * racing to stop share one run; the first cause (and grace) is the one used.
   */
  stop(cause: StopRecord["cause"], detail: string, graceMs = GRACE_MS): Promise<StopRecord> {
    this.stopping ??= this.runStop(cause, detail, graceMs);
    return this.stopping;
  }

  private async runStop(
    cause: StopRecord["cause"],
    detail: string,
    graceMs: number,
  ): Promise<StopRecord> {
    this.state = "stopping";
    this.conn.beginStop(cause === "exited" ? "exited" : "stopped");
    this.child.closeInput();
    const emptied = await this.waitEmpty(graceMs);
    if (!emptied) {
      this.child.killGroup("SIGKILL");
      await this.waitEmpty(GRACE_MS);
    }
    // The leader's exit status must be collected too, or it lingers as a zombie.
    if (!this.leaderGone) await this.child.exited;
    // An escaped helper (setsid) may still hold stdout or stderr open; mu must
    // not wait on it past the stop, so the invocation stays bounded.
    this.child.releasePipes?.();
    this.state = "stopped";
    const record = { cause, detail, forced: !emptied };
    this.onStopped(this, record);
    return record;
  }

  private async waitEmpty(ms: number): Promise<boolean> {
    const until = this.ports.clock.now() + ms;
    for (;;) {
      // A leader not yet reaped is a member: only after its exit is a look
      // at the whole group worth its cost.
      if (this.leaderGone && this.ports.liveness.groupEmpty(this.pgid)) return true;
      const left = until - this.ports.clock.now();
      if (left <= 0) return false;
      // While the leader lives the group cannot be empty, so there is nothing
      // to poll: wait for its exit, or the grace's end, whichever is first
      // (one wake-up instead of 250 for a plugin that ignores its EOF). Only
      // the rest of a group has no exit to wait on, and is polled. The
      // timer is cancelled at the exit, or it would hold mu's own exit.
      await (this.leaderGone ? this.ports.clock.sleep(POLL_MS) : this.leaderExitOr(left));
    }
  }

  /** Resolves when the leader exits or after ms, whichever is first. */
  private leaderExitOr(ms: number): Promise<void> {
    return new Promise((wake) => {
      // Unreferenced, and safe so: the live leader's own handle keeps mu running.
      const timer = this.ports.clock.setTimer(ms, wake);
      void this.child.exited.then(() => {
        timer.cancel();
        wake();
      });
    });
  }

  /** For exits that cannot wait: kill the group now, synchronously. */
  killNow(): void {
    if (this.state !== "stopped") this.child.killGroup("SIGKILL");
  }
}

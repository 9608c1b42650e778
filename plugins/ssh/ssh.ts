import { existsSync, type FSWatcher, mkdtempSync, readdirSync, rmSync, watch } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type Ran, type RunOpts, runLocal } from "./local-run.js";
import { adoptLaunched, type Master, spawnMaster } from "./master.js";
import { callDeadline, PluginError } from "./rpc.js";
import { mark } from "./timing.js";

// One OpenSSH connection per plugin life: a ControlMaster started as a plain
// child (ControlPersist off, since a persisted master forks away from the
// plugin's group), shared by every call through its control socket.

export interface SshTarget {
  dest: string;
  port?: string;
  identity?: string;
  config?: string;
  options: string[];
}

export function q(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

const CONNECT =
  /Connection refused|Connection reset|Connection timed out|No route to host|Network is unreachable|Connection closed by|kex_exchange_identification|Broken pipe|Connection to .* closed/;

/** Turns ssh's own failure (exit 255, or git's report of it) into the protocol's error classes. */
export function classify(stderr: string, dest: string, started: boolean): PluginError {
  const line = stderr.split("\n").find((l) => l.trim()) ?? "ssh failed";
  const why = `${line.trim().slice(0, 300)}`;
  if (/Permission denied|Too many authentication failures|no mutual signature/.test(stderr))
    return new PluginError(
      "human",
      `mu-plugin-ssh: ssh login to ${dest} refused: ${why}`,
      `install the plugin's public key in the remote authorized_keys, or pass -i KEY`,
    );
  if (
    /Host key verification failed|HOST IDENTIFICATION HAS CHANGED|host key .* not known/i.test(
      stderr,
    )
  )
    return new PluginError(
      "human",
      `mu-plugin-ssh: ${dest}'s host key is not trusted: ${why}`,
      `verify the host's key and add it to the known_hosts file ssh uses (ssh-keyscan)`,
    );
  if (
    /Could not resolve hostname|Name or service not known|Bad configuration option|Unsupported option/.test(
      stderr,
    )
  )
    return new PluginError(
      "permanent",
      `mu-plugin-ssh: cannot reach ${dest}: ${why}`,
      "fix --dest, -F or -o in the plugin's registration",
    );
  if (!started && CONNECT.test(stderr))
    return new PluginError("retryable", `mu-plugin-ssh: cannot connect to ${dest}: ${why}`);
  return new PluginError(
    "unknown-outcome",
    `mu-plugin-ssh: the connection to ${dest} was lost: ${why}`,
  );
}

/** Removes socket directories left by plugins that were killed (their pid is gone). */
function sweepDeadDirs(): void {
  try {
    for (const d of readdirSync(tmpdir())) {
      const pid = Number(/^mu-ssh-(\d+)-/.exec(d)?.[1]);
      if (!pid || pid === process.pid) continue;
      try {
        process.kill(pid, 0);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ESRCH")
          rmSync(join(tmpdir(), d), { recursive: true, force: true });
      }
    }
  } catch {
    // a sweep that fails leaves litter, nothing worse
  }
}

/** A watch on dir, or none where the system has no watch to give (inotify's limit reached): then the poll alone serves. */
function watchDir(dir: string, onChange: () => void): FSWatcher | undefined {
  try {
    // An error (the directory gone at the stop) only ends the watch.
    return watch(dir, onChange).on("error", () => {});
  } catch {
    return undefined;
  }
}

/** How long a refused connection is tried again, at most, and the waits between tries. */
const CONNECT_WINDOW_MS = 10_000;
const FIRST_WAIT_MS = 250;
const MAX_WAIT_MS = 2_000;
/** What a call keeps of its deadline for its work once connected. */
const WORK_MS = 3_000;

/** Kept under sshd's default MaxSessions, with one to spare for a kill. */
const MAX_SESSIONS = 8;

export class Ssh {
  private dirMade: string | undefined;
  private swept = false;
  /** The socket's directory, made on first use and named by this pid so a later plugin can sweep it. */
  private get dir(): string {
    this.dirMade ??= mkdtempSync(join(tmpdir(), `mu-ssh-${process.pid}-`));
    return this.dirMade;
  }
  private get sock(): string {
    return join(this.dir, "c");
  }
  private master: Master | undefined;
  /** The launcher's master, adopted and not yet waited on: the first start waits on it. */
  private launched: Master | undefined;
  private starting: Promise<void> | undefined;
  /** Sessions open on the master now, and callers waiting for one. */
  private open = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly t: SshTarget) {}

  /** Options every ssh gets; mode options go first because ssh keeps the first value it reads. */
  base(): string[] {
    const a: string[] = [];
    if (this.t.config) a.push("-F", this.t.config);
    if (this.t.port) a.push("-p", this.t.port);
    if (this.t.identity) a.push("-i", this.t.identity);
    for (const o of this.t.options) a.push("-o", o);
    a.push("-o", "BatchMode=yes", "-o", "ConnectTimeout=10", "-o", "ServerAliveInterval=5");
    return a;
  }

  /**
   * Starts the master if it is not up, trying again while the remote refuses
   * (a restarting sshd, a blip on the route) and time is left: at most
   * CONNECT_WINDOW_MS, ending by `until` (epoch ms) and early enough in the
   * call's deadline for the work to follow. A refusal means nothing ran, so
   * a retry is safe.
   */
  async up(signal?: AbortSignal, until = Number.POSITIVE_INFINITY): Promise<void> {
    const end = Math.min(until, callDeadline() - WORK_MS, Date.now() + CONNECT_WINDOW_MS);
    for (let wait = FIRST_WAIT_MS; ; wait = Math.min(wait * 2, MAX_WAIT_MS)) {
      try {
        return await this.upOnce(signal);
      } catch (err) {
        const again = err instanceof PluginError && err.kind === "retryable";
        if (!again || signal?.aborted || Date.now() + wait > end) throw err;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  /**
   * Starts the connection now, before any call needs it, so its handshake
   * runs while mu and this plugin are still starting. A failure is only
   * remembered by its absence: the first call tries again, as it would have.
   */
  warm(): void {
    const early = adoptLaunched((dir) => this.masterArgs(join(dir, "c")));
    if (early) {
      this.dirMade = early.dir;
      this.launched = early.master;
    }
    this.upOnce().catch(() => {});
  }

  /** The master's argv; bin/mu-plugin-ssh builds the same, in the same order. */
  private masterArgs(sock: string): string[] {
    return [
      "-o",
      "ControlMaster=yes",
      "-o",
      "ControlPersist=no",
      "-o",
      `ControlPath=${sock}`,
      ...this.base(),
      "-N",
      "-T",
      this.t.dest,
    ];
  }

  /** One start; callers that arrive meanwhile share it. */
  private upOnce(signal?: AbortSignal): Promise<void> {
    // A master a signal ended has a null exitCode too, and leaves its socket:
    // taken for alive, every session would pay a handshake of its own.
    const m = this.master;
    if (m?.alive() && existsSync(this.sock)) return Promise.resolve();
    this.starting ??= this.start(signal).finally(() => {
      this.starting = undefined;
    });
    return this.starting;
  }

  private async start(signal?: AbortSignal): Promise<void> {
    let m = this.launched;
    this.launched = undefined;
    if (!m) {
      this.master?.kill();
      // A killed master leaves its socket behind; a new master would refuse to bind it.
      rmSync(this.sock, { force: true });
      m = spawnMaster(this.masterArgs(this.sock));
      mark("master spawned");
    }
    this.master = m;
    // The socket appears the moment the handshake is done: watched, not
    // polled, so a call waits no tick past it (the slow poll is a fallback).
    let wake = () => {};
    const watcher = watchDir(this.dir, () => wake());
    try {
      if (!this.swept) {
        this.swept = true;
        sweepDeadDirs();
      }
      for (;;) {
        if (existsSync(this.sock)) {
          mark("master up");
          return;
        }
        if (!m.alive()) break;
        if (signal?.aborted) {
          m.kill();
          throw new PluginError("retryable", "mu-plugin-ssh: cancelled while connecting");
        }
        await Promise.race([
          m.exited,
          new Promise<void>((r) => {
            wake = r;
            setTimeout(r, 100).unref();
          }),
        ]);
      }
    } finally {
      watcher?.close();
    }
    throw classify(m.stderr(), this.t.dest, false);
  }

  /** ssh args for one session through the master (or a fresh connection when `fresh`). */
  args(remoteCmd: string, fresh = false): string[] {
    const mode = fresh
      ? ["-o", "ControlMaster=no", "-o", "ControlPath=none"]
      : ["-o", "ControlMaster=no", "-o", `ControlPath=${this.sock}`];
    return [...mode, ...this.base(), "-T", this.t.dest, remoteCmd];
  }

  /** The command git runs for its transport, through the same master. */
  gitSshCommand(): string {
    const mode = ["-o", "ControlMaster=no", "-o", `ControlPath=${this.sock}`];
    return ["ssh", ...mode, ...this.base()].map(q).join(" ");
  }

  async run(remoteCmd: string, o: RunOpts & { fresh?: boolean } = {}): Promise<Ran> {
    if (o.fresh) return runLocal("ssh", this.args(remoteCmd, true), o);
    await this.up(o.signal);
    // sshd serves at most MaxSessions (10 by default) sessions per connection.
    while (this.open >= MAX_SESSIONS) await new Promise<void>((r) => this.waiting.push(r));
    this.open++;
    try {
      mark("session start");
      return await runLocal("ssh", this.args(remoteCmd), o);
    } finally {
      mark("session end");
      this.open--;
      this.waiting.shift()?.();
    }
  }

  /** A short command that must work: a non-zero exit or an ssh failure throws. */
  async must(remoteCmd: string, timeoutMs = 15_000, signal?: AbortSignal): Promise<string> {
    const r = await this.run(remoteCmd, { timeoutMs, signal });
    if (r.timedOut)
      throw new PluginError("unknown-outcome", "mu-plugin-ssh: remote command timed out");
    if (r.code === 255) throw classify(r.stderr, this.t.dest, true);
    if (r.code !== 0)
      throw new PluginError(
        "permanent",
        `mu-plugin-ssh: remote command failed (${r.code}): ${r.stderr.split("\n")[0]?.slice(0, 300)}`,
      );
    return r.stdout.toString("utf8");
  }

  close(): void {
    this.master?.kill();
    this.launched?.kill();
    if (this.dirMade) rmSync(this.dirMade, { recursive: true, force: true });
  }
}

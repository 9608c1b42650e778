// The only doors from mu's logic to time, disk and processes. Production
// wires the real ones (real.ts); the virtual engine wires fakes. No other
// module may import node:fs, node:child_process or read the clock itself.

import type { Mux } from "../view/backend.js";

export interface Clock {
  /** Epoch milliseconds. */
  now(): number;
  sleep(ms: number): Promise<void>;
  /** A timer that does not keep the process alive. */
  setTimer(ms: number, fn: () => void): { cancel(): void };
}

export interface FileHandle {
  write(data: Uint8Array): Promise<void>;
  sync(): Promise<void>;
  close(): Promise<void>;
}

export interface FileStat {
  type: "file" | "directory" | "other";
  uid: number;
  /** Permission bits (mode & 0o7777). */
  mode: number;
}

export interface FileSystem {
  /** Follows symlinks; null when the path (or a link's target) does not exist. */
  stat(path: string): Promise<FileStat | null>;
  /** The file's bytes, or null when it does not exist. */
  readFile(path: string): Promise<Uint8Array | null>;
  /**
   * At most maxBytes of the file's first bytes, or null when it does not
   * exist: a file a person names may be endless (/dev/zero, a FIFO fed forever).
   */
  readHead(path: string, maxBytes: number): Promise<Uint8Array | null>;
  /** Opens for writing, truncating; `exclusive` fails with EEXIST if present. */
  open(path: string, opts?: { exclusive?: boolean; mode?: number }): Promise<FileHandle>;
  rename(from: string, to: string): Promise<void>;
  /** Removes a file; a missing file is not an error. */
  unlink(path: string): Promise<void>;
  mkdirp(path: string, mode?: number): Promise<void>;
  /** fsync a directory so a rename or create in it survives power loss. */
  syncDir(path: string): Promise<void>;
  /** The names in a directory; an absent directory has none. */
  readdir(path: string): Promise<string[]>;
}

/** A process is named by its pid and its start time, so a reused pid is not mistaken for it. */
export interface ProcessId {
  pid: number;
  start: string;
}

export interface Liveness {
  /** This process's own identity. */
  self(): ProcessId;
  /** The start time of a live pid, or null when there is no such process. */
  startOf(pid: number): string | null;
  /** True while that exact process (pid and start time) lives. */
  alive(id: ProcessId): boolean;
  /** True when no process is left in the process group. */
  groupEmpty(pgid: number): boolean;
}

export interface ExitStatus {
  code: number | null;
  signal: string | null;
}

/** A child started as the leader of its own process group (pgid = pid). */
export interface ChildProcess {
  readonly pid: number;
  /** Writes to the child's stdin; false when stdin is already closed. */
  write(bytes: Uint8Array): boolean;
  closeInput(): void;
  onStdout(fn: (chunk: Uint8Array) => void): void;
  onStderr(fn: (chunk: Uint8Array) => void): void;
  /** stdout reached EOF: every byte the plugin wrote has been delivered. */
  onStdoutEnd(fn: () => void): void;
  /**
   * A write to stdin failed (EPIPE: the plugin closed its stdin). Only a real
   * pipe can break this way, so an in-memory one may leave it out.
   */
  onInputError?(fn: (code: string) => void): void;
  /**
   * The group is gone: its pipes no longer hold mu's exit. A helper that
   * escaped the group may keep their write ends open for as long as it
   * lives; what it still sends is read only while mu lives for other reasons.
   */
  releasePipes?(): void;
  /** Settles when the leader has exited (its group may still hold others). */
  readonly exited: Promise<ExitStatus>;
  /** Signals every process in the group; a group already empty is not an error. */
  killGroup(signal: "SIGKILL" | "SIGTERM"): void;
}

export interface SpawnOptions {
  env: Record<string, string>;
  /** Given always: a child never inherits the directory of the process that runs mu. */
  cwd: string;
}

export interface ProcessSpawner {
  /** Rejects when the executable cannot be started at all (EACCES, ENOENT). */
  spawn(argv: readonly string[], opts: SpawnOptions): Promise<ChildProcess>;
}

/** Where mu's keys, message ids and back-off jitter come from. */
export interface Randomness {
  /** `bytes` random bytes as lowercase hex. */
  hex(bytes: number): string;
  /** A number in [0, 1). */
  fraction(): number;
}

export interface Ports {
  clock: Clock;
  random: Randomness;
  fs: FileSystem;
  liveness: Liveness;
  spawner: ProcessSpawner;
  env: Readonly<Record<string, string | undefined>>;
  /** The invoking user's uid: plugins must be owned by it. */
  uid: number;
  /**
   * The absolute directory mu was run in: the caller's checkout and relative
   * paths on the command line are found from it. mu never reads the
   * process's own, so the virtual engine can give each run a directory
   * without moving the process.
   */
  cwd: string;
  /**
   * Ends this process at once, as SIGKILL would: no handler, no flush, no
   * cleanup, and the promise never settles. Only the testbed's crash points
   * call it.
   */
  crash(): Promise<never>;
  /** Testbed: mux backends that stand in for the built-in ones of the same name. */
  muxes?: Readonly<Record<string, (ports: Ports) => Mux>>;
  /**
   * Diagnostics no verb's outcome depends on (how long a lock was waited
   * for): kept by a trace when one is written, dropped otherwise.
   */
  note?(ev: string, fields: Record<string, unknown>): void;
}

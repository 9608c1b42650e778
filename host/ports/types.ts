// The only doors from mu's logic to time, disk and processes. Production
// wires the real ones (real.ts); the virtual engine wires fakes. No other
// module may import node:fs, node:child_process or read the clock itself.

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

export interface FileSystem {
  /** The file's bytes, or null when it does not exist. */
  readFile(path: string): Promise<Uint8Array | null>;
  /** Opens for writing, truncating; `exclusive` fails with EEXIST if present. */
  open(path: string, opts?: { exclusive?: boolean; mode?: number }): Promise<FileHandle>;
  rename(from: string, to: string): Promise<void>;
  /** Removes a file; a missing file is not an error. */
  unlink(path: string): Promise<void>;
  mkdirp(path: string, mode?: number): Promise<void>;
  /** fsync a directory so a rename or create in it survives power loss. */
  syncDir(path: string): Promise<void>;
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

export interface Ports {
  clock: Clock;
  fs: FileSystem;
  liveness: Liveness;
  env: Readonly<Record<string, string | undefined>>;
}

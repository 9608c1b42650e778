import { basename, dirname, join } from "node:path";
import { Volume } from "memfs";
import type { FileHandle, FileStat, FileSystem } from "../../host/ports/types.js";

// The virtual engine's disk: the live files on memfs, and beside them what a
// crash would leave. A file's bytes survive only once fsynced; a name
// (create, rename, unlink) survives only once its directory is fsynced. A
// crash rebuilds the volume from exactly that, so a commit protocol that
// forgets an fsync loses data here as it would after a power cut.
//
// `crashAfter(n)` arms a crash at the n-th operation from now: that operation
// and every later one throw VirtualCrash, as if the process had died there.

export class VirtualCrash extends Error {
  constructor(readonly at: string) {
    super(`virtual crash at ${at}`);
  }
}

interface Inode {
  synced: Uint8Array | null;
  /** The mode it was created with, which a restart keeps (an executable stays one). */
  mode?: number;
}

const code = (err: unknown) => (err as { code?: string } | null)?.code;
/** An error as Node's fs raises it, its code in the message and on the error. */
const sysError = (c: string, m: string) => Object.assign(new Error(`${c}: ${m}`), { code: c });

export class VirtualFs implements FileSystem {
  private vol = new Volume();
  /** Live name → inode identity, so synced bytes follow a file through a rename. */
  private inodeOf = new Map<string, Inode>();
  /** The names a crash keeps, with the inode each names. */
  private durable = new Map<string, Inode>();
  private dirs = new Set<string>(["/"]);
  private countdown: number | null = null;
  private crashed = false;
  readonly ops: string[] = [];
  uid = 1000;
  /** A damage step's full disk: the most one write may add (a new directory's block is more), or null. */
  room: number | null = null;
  /** Files another user owns (by their real path): only an install step makes one. */
  private foreign = new Set<string>();

  constructor() {
    this.vol.mkdirSync("/", { recursive: true });
  }

  private onCrash: (() => void) | undefined;

  /** The next n-th operation (1 = the next one) crashes the process; onCrash hears it first. */
  crashAfter(n: number | null, onCrash?: () => void): void {
    this.countdown = n;
    this.onCrash = onCrash;
  }

  /** Whether a crash happened and recover() has not run since. */
  get down(): boolean {
    return this.crashed;
  }

  /** Restarts from what survived: the process that crashed is gone; a new one starts. */
  recover(): void {
    const vol = new Volume();
    const inodes = new Map<string, Inode>();
    for (const d of this.dirs) vol.mkdirSync(d, { recursive: true });
    for (const [path, inode] of this.durable) {
      vol.mkdirSync(dirname(path), { recursive: true });
      vol.writeFileSync(path, inode.synced ?? new Uint8Array(), { mode: inode.mode ?? 0o600 });
      inodes.set(path, { synced: inode.synced, mode: inode.mode });
    }
    this.vol = vol;
    this.inodeOf = inodes;
    this.durable = new Map(inodes);
    this.countdown = null;
    this.onCrash = undefined;
    this.crashed = false;
  }

  private step(op: string): void {
    if (this.crashed) throw new VirtualCrash(op);
    this.ops.push(op);
    if (this.countdown !== null && --this.countdown <= 0) {
      this.crashed = true;
      this.onCrash?.();
      throw new VirtualCrash(op);
    }
  }

  async stat(path: string): Promise<FileStat | null> {
    this.step(`stat ${path}`);
    try {
      const s = this.vol.statSync(path);
      return {
        type: s.isDirectory() ? "directory" : s.isFile() ? "file" : "other",
        uid: this.foreign.has(String(this.vol.realpathSync(path))) ? this.uid + 1 : this.uid,
        mode: Number(s.mode) & 0o7777,
      };
    } catch (err) {
      if (code(err) === "ENOENT") return null;
      throw err;
    }
  }

  async readFile(path: string): Promise<Uint8Array | null> {
    this.step(`read ${path}`);
    try {
      return new Uint8Array(this.vol.readFileSync(path) as Buffer);
    } catch (err) {
      if (code(err) === "ENOENT") return null;
      throw err;
    }
  }

  async readHead(path: string, maxBytes: number): Promise<Uint8Array | null> {
    const all = await this.readFile(path);
    return all === null ? null : all.subarray(0, maxBytes);
  }

  async open(path: string, opts: { exclusive?: boolean; mode?: number } = {}): Promise<FileHandle> {
    this.step(`open ${path}`);
    const fd = this.vol.openSync(path, opts.exclusive ? "wx" : "w", opts.mode ?? 0o600);
    const inode: Inode = { synced: null, mode: opts.mode ?? 0o600 };
    this.inodeOf.set(path, inode);
    let name = path;
    return {
      write: async (data) => {
        this.step(`write ${name}`);
        if (this.room !== null && data.length > this.room)
          throw sysError("ENOSPC", `no space left on device, write '${name}'`);
        this.vol.writeSync(fd, data);
      },
      sync: async () => {
        this.step(`fsync ${name}`);
        inode.synced = new Uint8Array(this.vol.readFileSync(name) as Buffer);
      },
      close: async () => {
        this.vol.closeSync(fd);
        // A rename while open would move it; the handle follows the inode.
        for (const [p, i] of this.inodeOf) if (i === inode) name = p;
      },
    };
  }

  async rename(from: string, to: string): Promise<void> {
    this.step(`rename ${from} ${to}`);
    // Linux refuses to rename a file over a directory; memfs would replace it.
    if (this.vol.existsSync(to) && this.vol.statSync(to).isDirectory())
      throw sysError("EISDIR", `illegal operation on a directory, rename '${from}' -> '${to}'`);
    this.vol.renameSync(from, to);
    const inode = this.inodeOf.get(from) ?? { synced: null };
    this.inodeOf.delete(from);
    this.inodeOf.set(to, inode);
  }

  async unlink(path: string): Promise<void> {
    this.step(`unlink ${path}`);
    try {
      this.vol.unlinkSync(path);
    } catch (err) {
      if (code(err) !== "ENOENT") throw err;
    }
    this.inodeOf.delete(path);
  }

  async mkdirp(path: string, mode = 0o700): Promise<void> {
    this.step(`mkdir ${path}`);
    // Linux refuses a file in the way, where memfs would go on as if it were a directory.
    for (let at = path; at !== dirname(at); at = dirname(at)) {
      if (!this.vol.existsSync(at) || this.vol.statSync(at).isDirectory()) continue;
      if (at === path) throw sysError("EEXIST", `file already exists, mkdir '${path}'`);
      throw sysError("ENOTDIR", `not a directory, mkdir '${path}'`);
    }
    if (this.room !== null && !this.vol.existsSync(path))
      throw sysError("ENOSPC", `no space left on device, mkdir '${path}'`);
    this.vol.mkdirSync(path, { recursive: true, mode });
  }

  async readdir(path: string): Promise<string[]> {
    this.step(`readdir ${path}`);
    try {
      return (this.vol.readdirSync(path) as string[]).map(String);
    } catch (err) {
      if (code(err) === "ENOENT") return [];
      throw err;
    }
  }

  /** The directory's entries as they are now become what a crash keeps. */
  async syncDir(dir: string): Promise<void> {
    this.step(`fsync-dir ${dir}`);
    this.dirs.add(dir);
    for (const path of [...this.durable.keys()])
      if (dirname(path) === dir) this.durable.delete(path);
    for (const name of this.vol.readdirSync(dir) as string[]) {
      const path = join(dir, String(name));
      if (this.vol.statSync(path).isDirectory()) {
        this.dirs.add(path);
        continue;
      }
      this.durable.set(path, this.inodeOf.get(path) ?? { synced: null });
    }
  }

  /** A directory's names as the live process sees them, for assertions (no operation counted). */
  peekDir(dir: string): string[] {
    try {
      return (this.vol.readdirSync(dir) as string[]).map(String);
    } catch {
      return [];
    }
  }

  /** What exec would say of a path: false only for an existing file without an execute bit. */
  mayExec(path: string): boolean {
    try {
      return (Number(this.vol.statSync(path).mode) & 0o111) !== 0;
    } catch {
      return true;
    }
  }

  /**
   * Lays out a file from outside (an install step): a launcher or the bytes given, a
   * directory, or a symlink to a file, mu's user's or another's; or deletes one again.
   */
  install(
    path: string,
    mode: number,
    kind: "file" | "directory" | "symlink" | "removed",
    owner?: "other",
    bytes: Uint8Array | string = "#!/usr/bin/env node\n",
  ): void {
    if (kind === "removed") {
      this.foreign.delete(path);
      this.vol.rmSync(path, { recursive: true });
      return;
    }
    this.vol.mkdirSync(dirname(path), { recursive: true });
    if (kind === "directory") {
      this.vol.mkdirSync(path, { mode });
      return;
    }
    const target = kind === "symlink" ? join(dirname(path), `.target-${basename(path)}`) : path;
    this.vol.writeFileSync(target, bytes, { mode });
    this.vol.chmodSync(target, mode);
    if (kind === "symlink") this.vol.symlinkSync(target, path);
    if (owner === "other") this.foreign.add(target);
    else this.foreign.delete(target);
  }

  /** Deletes a file from outside, durably, as another process's unlink and fsync would; a missing one is fine. */
  removeFromOutside(path: string): void {
    if (this.peek(path) === null) return;
    this.vol.unlinkSync(path);
    this.inodeOf.delete(path);
    this.durable.delete(path);
  }

  /** Replaces a file by a directory of the same name holding one file, durably, from outside. */
  replaceByDirectory(path: string): void {
    this.vol.unlinkSync(path);
    this.vol.mkdirSync(path);
    this.vol.writeFileSync(join(path, "in-the-way"), "");
    this.inodeOf.delete(path);
    this.durable.delete(path);
    this.dirs.add(path);
    this.durable.set(join(path, "in-the-way"), { synced: new Uint8Array() });
  }

  /** Whether a path is a directory, for assertions (no operation counted). */
  peekIsDir(path: string): boolean {
    try {
      return this.vol.statSync(path).isDirectory();
    } catch {
      return false;
    }
  }

  /** Replaces a file's bytes from outside, durably, as a damage step's editor would. */
  overwrite(path: string, bytes: Uint8Array): void {
    if (!this.vol.existsSync(dirname(path))) this.dirs.add(dirname(path));
    this.vol.mkdirSync(dirname(path), { recursive: true });
    this.vol.writeFileSync(path, bytes);
    const inode = this.inodeOf.get(path) ?? { synced: null };
    inode.synced = new Uint8Array(bytes);
    this.inodeOf.set(path, inode);
    this.durable.set(path, inode);
  }

  /** Reads a file as the live process sees it, for assertions. */
  peek(path: string): Uint8Array | null {
    try {
      return new Uint8Array(this.vol.readFileSync(path) as Buffer);
    } catch {
      return null;
    }
  }
}

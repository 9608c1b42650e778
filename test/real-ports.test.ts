import { spawn, spawnSync } from "node:child_process";
import {
  chmodSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { realClock, realFs, realLiveness, realPorts, withClockOffset } from "../host/ports/real.js";
import type { Clock } from "../host/ports/types.js";
import { nodeScript } from "./helpers.js";

// The real ports are mu's one door to the machine. Every verb goes through
// them on the happy path; these pin the edges no scenario reaches: a path
// that is missing in each way the kernel can say so, an error that must
// not be taken for missing, a zombie, a working directory removed under mu.

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mu-ports-"));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A name longer than any file system takes: an error that is not ENOENT. */
const tooLong = () => join(dir, "n".repeat(300));

describe("realFs", () => {
  it("says what a path is, and null for each way of not being there", async () => {
    writeFileSync(join(dir, "f"), "x");
    expect(await realFs.stat(join(dir, "f"))).toMatchObject({ type: "file" });
    expect(await realFs.stat(dir)).toMatchObject({ type: "directory" });
    expect(await realFs.stat("/dev/null")).toMatchObject({ type: "other" });
    expect(await realFs.stat(join(dir, "none"))).toBeNull(); // ENOENT
    expect(await realFs.stat(join(dir, "f", "under"))).toBeNull(); // ENOTDIR
    symlinkSync(join(dir, "loop"), join(dir, "loop"));
    expect(await realFs.stat(join(dir, "loop"))).toBeNull(); // ELOOP
    await expect(realFs.stat(tooLong())).rejects.toMatchObject({ code: "ENAMETOOLONG" });
  });

  it("reads a file whole, null when missing, and throws any other error", async () => {
    writeFileSync(join(dir, "f"), "hello");
    expect(Buffer.from((await realFs.readFile(join(dir, "f"))) ?? []).toString()).toBe("hello");
    expect(await realFs.readFile(join(dir, "none"))).toBeNull();
    await expect(realFs.readFile(tooLong())).rejects.toMatchObject({ code: "ENAMETOOLONG" });
  });

  it("reads at most maxBytes from the head, of a file or an endless device", async () => {
    writeFileSync(join(dir, "f"), "0123456789");
    const head = async (p: string, n: number) =>
      Buffer.from((await realFs.readHead(p, n)) ?? [0xff]).toString("latin1");
    expect(await head(join(dir, "f"), 4)).toBe("0123");
    expect(await head(join(dir, "f"), 100)).toBe("0123456789");
    expect(await head("/dev/zero", 3)).toBe("\0\0\0");
    expect(await realFs.readHead(join(dir, "none"), 4)).toBeNull();
    await expect(realFs.readHead(tooLong(), 4)).rejects.toMatchObject({ code: "ENAMETOOLONG" });
  });

  it("closes what it opens: reading heads and syncing directories leaves no descriptor open", async () => {
    writeFileSync(join(dir, "f"), "0123456789");
    const open = () => readdirSync("/proc/self/fd").length;
    const before = open();
    for (let i = 0; i < 20; i++) {
      await realFs.readHead(join(dir, "f"), 4);
      await realFs.syncDir(dir);
    }
    expect(open()).toBe(before);
  });

  it("writes new files owner-only unless told another mode", async () => {
    const old = process.umask(0o022);
    try {
      for (const [name, opts, mode] of [
        ["plain", {}, 0o600],
        ["shared", { mode: 0o644 }, 0o644],
      ] as const) {
        const fh = await realFs.open(join(dir, name), opts);
        await fh.write(new TextEncoder().encode(name));
        await fh.sync();
        await fh.close();
        expect(statSync(join(dir, name)).mode & 0o777).toBe(mode);
        expect(readFileSync(join(dir, name), "utf8")).toBe(name);
      }
    } finally {
      process.umask(old);
    }
    await expect(realFs.open(join(dir, "plain"), { exclusive: true })).rejects.toMatchObject({
      code: "EEXIST",
    });
  });

  it("unlinks a missing file quietly, and throws any other error", async () => {
    writeFileSync(join(dir, "f"), "x");
    await realFs.unlink(join(dir, "f"));
    await realFs.unlink(join(dir, "f"));
    await expect(realFs.unlink(tooLong())).rejects.toMatchObject({ code: "ENAMETOOLONG" });
  });

  it("lists a missing directory as empty, and throws for a file", async () => {
    mkdirSync(join(dir, "d"));
    writeFileSync(join(dir, "d", "a"), "");
    expect(await realFs.readdir(join(dir, "d"))).toEqual(["a"]);
    expect(await realFs.readdir(join(dir, "none"))).toEqual([]);
    await expect(realFs.readdir(join(dir, "d", "a"))).rejects.toMatchObject({ code: "ENOTDIR" });
  });
});

describe("realLiveness", () => {
  it("takes a zombie for gone: it has exited and only its parent's wait is left", async () => {
    // sh starts a child that exits at once, then becomes sleep, which never
    // reaps it: the child stays a zombie while sleep runs.
    const parent = spawn("/bin/sh", ["-c", "sleep 0 & echo $!; exec sleep 30"], {
      stdio: ["ignore", "pipe", "ignore"],
    });
    try {
      const pid = Number(
        await new Promise<string>((done) => parent.stdout.once("data", (b) => done(String(b)))),
      );
      for (let i = 0; i < 500; i++) {
        const state = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.[0];
        if (state === "Z") break;
        await new Promise((r) => setTimeout(r, 10));
      }
      expect(readFileSync(`/proc/${pid}/stat`, "utf8")).toMatch(/\) Z /);
      expect(realLiveness.startOf(pid)).toBeNull();
      // The live parent has a start time, and is alive under it.
      const start = realLiveness.startOf(parent.pid ?? 0);
      expect(start).toMatch(/^\d+$/);
      expect(realLiveness.alive({ pid: parent.pid ?? 0, start: start ?? "" })).toBe(true);
    } finally {
      parent.kill("SIGKILL");
    }
  });

  it("reads its own start time, field 22 of its /proc stat", () => {
    const self = realLiveness.self();
    expect(self.pid).toBe(process.pid);
    expect(self.start).toBe(readFileSync("/proc/self/stat", "utf8").split(" ")[21]);
  });
});

describe("the clock", () => {
  it("sleeps at least as long as asked", async () => {
    const from = Date.now();
    await realClock.sleep(40);
    expect(Date.now() - from).toBeGreaterThanOrEqual(35);
  });

  it("never fires a cancelled timer", async () => {
    let fired = false;
    realClock
      .setTimer(20, () => {
        fired = true;
      })
      .cancel();
    await new Promise((r) => setTimeout(r, 100));
    expect(fired).toBe(false);
  });

  it("moved by MU_CLOCK_OFFSET_MS moves now, never the timers", async () => {
    const calls: string[] = [];
    const slept = Promise.resolve();
    const base: Clock = {
      now: () => 1000,
      sleep: (ms) => {
        calls.push(`sleep ${ms}`);
        return slept;
      },
      setTimer: (ms) => {
        calls.push(`timer ${ms}`);
        return { cancel: () => {} };
      },
    };
    const moved = withClockOffset(base, { MU_CLOCK_OFFSET_MS: "250" });
    expect(moved.now()).toBe(1250);
    expect(moved.sleep(7)).toBe(slept);
    moved.setTimer(9, () => {});
    expect(calls).toEqual(["sleep 7", "timer 9"]);
    expect(withClockOffset(base, {}).now()).toBe(1000);
  });
});

describe("realPorts", () => {
  it("draws fractions in [0, 1) and hex of the asked length", () => {
    const { random } = realPorts({});
    const f = random.fraction();
    expect(f).toBeGreaterThanOrEqual(0);
    expect(f).toBeLessThan(1);
    expect(random.hex(4)).toMatch(/^[0-9a-f]{8}$/);
  });

  // The trust rule compares a plugin file's owner with this uid, so it must
  // be the process's own, never a stand-in. As root, a child run as another
  // user shows it for a uid that is not 0.
  it("is the process's own uid", () => {
    expect(realPorts({}).uid).toBe(process.getuid?.());
    if (process.getuid?.() !== 0) return;
    // A copy another user can read, wherever the package itself lies (the
    // test's own temp directory is root's alone).
    const shared = mkdtempSync("/tmp/mu-ports-uid-");
    try {
      cpSync(join(packageRoot(), "dist/host"), join(shared, "host"), { recursive: true });
      spawnSync("chmod", ["-R", "a+rX", shared]);
      const real = join(shared, "host/ports/real.js");
      const script = `const { realPorts } = await import(${JSON.stringify(real)}); process.stdout.write(String(realPorts({}).uid));`;
      const r = nodeScript(script, {}, { uid: 65534, gid: 65534, cwd: "/" });
      expect([r.status, r.stdout, r.stderr]).toEqual([0, "65534", ""]);
    } finally {
      rmSync(shared, { recursive: true, force: true });
    }
  });

  // A shell left in a closed agent's worktree runs mu in a directory that is
  // gone: "." still names it to a child's spawn. A thread cannot chdir, so a
  // child process shows it.
  it("names a removed working directory '.'", () => {
    const gone = join(dir, "gone");
    mkdirSync(gone);
    chmodSync(gone, 0o700);
    const real = join(packageRoot(), "dist/host/ports/real.js");
    const script = [
      `process.chdir(${JSON.stringify(gone)});`,
      `(await import("node:fs")).rmdirSync(${JSON.stringify(gone)});`,
      `const { realPorts } = await import(${JSON.stringify(real)});`,
      "process.stdout.write(JSON.stringify(realPorts({}).cwd));",
    ].join("\n");
    const r = nodeScript(script);
    expect([r.status, r.stdout, r.stderr]).toEqual([0, '"."', ""]);
  });
});

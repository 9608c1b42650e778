import { spawn, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { holderGone } from "../sim/plugin/world-lock.js";

// The simulated world's lock, with real processes: a waiter never takes the
// lock from a holder that is alive however long it waits (two updates would
// both land on one read, and an effect counter would hide a double effect),
// and takes it at once from a holder that died.

const worldModule = join(packageRoot(), "dist", "sim", "plugin", "world.js");

/** A node process that adds one to the world's `effects.n`, through World.update. */
function updater(dir: string) {
  const code = `import(${JSON.stringify(worldModule)}).then(({ World }) => {
    new World(${JSON.stringify(dir)}).update((s) => { s.effects.n = (s.effects.n ?? 0) + 1; });
  });`;
  return spawn(process.execPath, ["-e", code], { stdio: "ignore" });
}

const count = (dir: string) =>
  (JSON.parse(readFileSync(join(dir, "state.json"), "utf8")) as { effects: { n?: number } }).effects
    .n ?? 0;

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "mu-world-lock-"));
  writeFileSync(join(dir, "state.json"), JSON.stringify({ calls: {}, effects: {}, fired: [] }));
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe("the world's lock", () => {
  it("judges a holder by its pid: alive keeps it, dead or empty-for-too-long gives it up", () => {
    const live = (pid: number) => pid === 42;
    expect(holderGone("42", 10_000, live)).toBe(false);
    expect(holderGone("43", 0, live)).toBe(true);
    // Between creating the file and writing its pid: wait for it.
    expect(holderGone("", 10_000, live)).toBe(false);
    expect(holderGone("", 31_000, live)).toBe(true);
    expect(holderGone("42", 31_000, live)).toBe(true);
  });

  it("an update waits past the old two seconds for a live holder, then lands once it lets go", async () => {
    // The holder: a live process whose pid the lock names.
    const holder = spawn("sleep", ["60"], { stdio: "ignore" });
    writeFileSync(join(dir, "state.lock"), String(holder.pid));
    const u = updater(dir);
    const exited = new Promise<number | null>((r) => u.on("exit", r));
    // Well past the old rule's two seconds: the updater must still be waiting.
    // (On a loaded machine it may not have started yet; it cannot land early either way.)
    await new Promise((r) => setTimeout(r, 3_000));
    expect(count(dir)).toBe(0);
    expect(u.exitCode).toBeNull();
    // The holder lets go as a holder does: by removing the lock.
    rmSync(join(dir, "state.lock"));
    expect(await exited).toBe(0);
    expect(count(dir)).toBe(1);
    expect(existsSync(join(dir, "state.lock"))).toBe(false);
    holder.kill("SIGKILL");
  }, 60_000);

  it("a lock left by a dead holder is taken over", async () => {
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]);
    writeFileSync(join(dir, "state.lock"), String(dead.stdout));
    const u = updater(dir);
    expect(await new Promise((r) => u.on("exit", r))).toBe(0);
    expect(count(dir)).toBe(1);
  }, 60_000);
});

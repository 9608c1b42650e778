import { describe, expect, it } from "vitest";
import { MuError } from "../host/errors.js";
import { openStore } from "../host/store/index.js";
import { acquireLock } from "../host/store/lock.js";
import { VirtualCrash } from "../sim/virtual/fs.js";
import { virtualWorld } from "../sim/virtual/ports.js";

// The first pieces of the virtual engine: mu's own store on a disk that
// keeps only what was fsynced (names only once their directory was), and a
// clock that moves only when told. A crash at every single disk operation of
// a commit must leave the database either as it was or as committed.

const rows = (w: ReturnType<typeof virtualWorld>) =>
  w.clock.run(
    openStore(w.ports()).read((db) =>
      (db.exec("SELECT id FROM tasks ORDER BY id")[0]?.values ?? []).map((r) => String(r[0])),
    ),
  );

const add = (w: ReturnType<typeof virtualWorld>, id: string) =>
  w.clock.run(
    openStore(w.ports()).write((db) =>
      db.run("INSERT INTO tasks (id, state, claimed_by, created_at) VALUES (?, 'open', NULL, 0)", [
        id,
      ]),
    ),
  );

/** The crashed mu is gone from the process table; a new one starts on what the disk kept. */
function restart(w: ReturnType<typeof virtualWorld>): void {
  w.processes.end(w.processes.current.pid);
  w.processes.current = w.processes.start();
  w.fs.recover();
}

describe("the virtual disk's crash model", () => {
  it("keeps a file's bytes only once fsynced, and its name only once the directory is", async () => {
    const w = virtualWorld();
    await w.fs.mkdirp("/d");
    const unsynced = await w.fs.open("/d/a");
    await unsynced.write(Buffer.from("lost"));
    await unsynced.close();
    const synced = await w.fs.open("/d/b");
    await synced.write(Buffer.from("kept"));
    await synced.sync();
    await synced.close();
    await w.fs.syncDir("/d");
    const late = await w.fs.open("/d/c");
    await late.write(Buffer.from("no name"));
    await late.sync();
    await late.close();
    w.fs.recover();
    expect(Buffer.from(w.fs.peek("/d/a") ?? []).toString()).toBe("");
    expect(Buffer.from(w.fs.peek("/d/b") ?? []).toString()).toBe("kept");
    expect(w.fs.peek("/d/c")).toBeNull();
  });
});

describe("mu's store on the virtual disk", () => {
  it("a commit that returned survives a crash", async () => {
    const w = virtualWorld();
    await add(w, "a");
    restart(w);
    expect(await rows(w)).toEqual(["a"]);
  });

  it("a crash at any disk operation of a commit leaves the old state or the new, never a damaged one", async () => {
    // How many disk operations one commit takes, counted on a dry run.
    const dry = virtualWorld();
    await add(dry, "a");
    const before = dry.fs.ops.length;
    await add(dry, "b");
    const steps = dry.fs.ops.length - before;
    expect(steps).toBeGreaterThan(5);
    const seen = new Set<string>();
    for (let n = 1; n <= steps; n++) {
      const w = virtualWorld();
      await add(w, "a");
      w.fs.crashAfter(n);
      // A crash while the lock is given back comes after the commit, and
      // mu does not wait on that step: the write may still resolve.
      const r = await add(w, "b").then(
        () => "resolved",
        (err: unknown) => err,
      );
      if (r !== "resolved") expect(r).toBeInstanceOf(VirtualCrash);
      restart(w);
      const after = await rows(w);
      expect([["a"], ["a", "b"]], `crash at op ${n}: ${w.fs.ops.at(-1)}`).toContainEqual(after);
      seen.add(after.join(","));
      // The dead writer's lock and temp file do not stop the next commit.
      await add(w, "c");
      expect((await rows(w)).at(-1)).toBe("c");
    }
    // The sweep reached both sides of the rename.
    expect([...seen].sort()).toEqual(["a", "a,b"]);
  });
});

describe("mu's lock on the virtual clock", () => {
  it("waits out MU_LOCK_TIMEOUT_MS of virtual time for a live holder, then gives up with exit 5", async () => {
    const w = virtualWorld();
    await w.fs.mkdirp("/state");
    const holder = w.processes.start();
    const fh = await w.fs.open("/state/mu.db.lock", { exclusive: true });
    await fh.write(Buffer.from(JSON.stringify({ ...holder, token: "t" })));
    await fh.close();
    let settled: unknown;
    const p = acquireLock(w.ports({ MU_LOCK_TIMEOUT_MS: "5000" }), "/state/mu.db.lock").then(
      () => {
        settled = "acquired";
      },
      (err) => {
        settled = err;
      },
    );
    await w.clock.advance(4_000);
    expect(settled).toBeUndefined();
    await w.clock.advance(2_000);
    await p;
    expect(settled).toBeInstanceOf(MuError);
    expect((settled as MuError).exit).toBe(5);
    // Once the holder is gone, its lock is broken at once.
    w.processes.end(holder.pid);
    const held = await acquireLock(w.ports(), "/state/mu.db.lock");
    await held.release();
  });
});

describe("the virtual process table", () => {
  it("gives processes started within one clock tick the same start time, as /proc does", async () => {
    const w = virtualWorld();
    const a = w.processes.start();
    const b = w.processes.start();
    expect(a.start).toBe(b.start);
    expect(a.pid).not.toBe(b.pid);
    // Only the pair names a process: a start time alone would take b for a.
    expect(w.processes.alive(a)).toBe(true);
    expect(w.processes.alive({ pid: a.pid, start: "t0" })).toBe(false);
    w.processes.end(a.pid);
    expect(w.processes.alive(a)).toBe(false);
    expect(w.processes.alive(b)).toBe(true);
    await w.clock.advance(10);
    expect(w.processes.start().start).not.toBe(a.start);
  });
});

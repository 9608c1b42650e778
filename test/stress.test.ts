import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { openStore } from "../host/store/index.js";
import { acquireLock } from "../host/store/lock.js";
import { danglingRecords } from "../sim/runner/dangling.js";
import { unreachableCollects } from "../sim/stress/collects.js";
import { quantile } from "../sim/stress/figures.js";
import type { MuRun } from "../sim/stress/run-mu.js";
import { virtualWorld } from "../sim/virtual/ports.js";
import { tempState } from "./helpers.js";

// The crew stress run's own parts: what it counts as a lock wait, what it
// calls a record naming something gone, and its percentiles.

describe("a wait for the database lock", () => {
  it("is noted with how long it took, and an uncontended lock notes nothing", async () => {
    const w = virtualWorld();
    await w.fs.mkdirp("/state");
    const notes: { ev: string; fields: Record<string, unknown> }[] = [];
    const ports = {
      ...w.ports(),
      note: (ev: string, fields: Record<string, unknown>) => notes.push({ ev, fields }),
    };
    const first = await w.clock.run(acquireLock(ports, "/state/mu.db.lock"));
    expect(notes).toEqual([]);
    const second = acquireLock(ports, "/state/mu.db.lock");
    await w.clock.advance(200);
    await first.release();
    await w.clock.advance(100);
    await (await second).release();
    expect(notes).toHaveLength(1);
    expect(notes[0]?.ev).toBe("lock-wait");
    expect(notes[0]?.fields.ms as number).toBeGreaterThanOrEqual(200);
  });
});

describe("records that name something gone", () => {
  const world = virtualWorld();
  const store = () => openStore(world.ports());
  const now = 1;

  it("are none in a database whose records hold together, and each one is named", async () => {
    await world.clock.run(
      store().write((db) => {
        db.run("INSERT INTO plugins VALUES ('sim', '[]', '{}', 'sim-1', '1.0.0', ?, ?)", [
          now,
          now,
        ]);
        db.run(
          "INSERT INTO host_profiles (name, plugin, instance, created_at) VALUES ('box', 'sim', 'sim-1', ?)",
          [now],
        );
      }),
    );
    expect(await world.clock.run(store().read(danglingRecords))).toEqual([]);
    await world.clock.run(
      store().write((db) => {
        db.run(
          "INSERT INTO host_profiles (name, plugin, instance, created_at) VALUES ('box2', 'gone', 'x', ?)",
          [now],
        );
        db.run(
          `INSERT INTO agents (workstream, name, incarnation, job_key, host, channel_plugin, channel, state, created_at)
           VALUES ('main', 'a', 1, 'k', 'nowhere', 'sim', 'sim', 'live', ?)`,
          [now],
        );
        // An agent's pending calls: one on a host that is gone, one on box, which is there.
        for (const [key, host] of [
          ["m1", "nowhere"],
          ["m2", "box"],
        ])
          db.run(
            `INSERT INTO intents (subject, method, plugin, key, params, sha256, instance, pgid, writer_pid, writer_start, written_at)
             VALUES ('agent:main/b', 'channel.send', 'sim', ?, ?, '', 'sim-1', 1, 1, '', ?)`,
            [key, JSON.stringify({ target: { host: { name: host } }, msgId: key }), now],
          );
      }),
    );
    expect(await world.clock.run(store().read(danglingRecords))).toEqual([
      "host box2 names plugin gone, which is gone",
      "a pending channel.send for agent:main/b names host nowhere, which is gone",
      "agent main/a names host nowhere, which is gone",
      "agent main/a names job k, which is gone",
    ]);
  });
});

it("names a commit a close reported collected that no ref reaches, and only that one", () => {
  const st = tempState();
  try {
    const git = (...args: string[]) =>
      spawnSync(
        "git",
        ["-c", "user.name=t", "-c", "user.email=t@localhost", "-C", st.dir, ...args],
        { encoding: "utf8" },
      ).stdout.trim();
    git("init", "-q");
    git("commit", "-q", "--allow-empty", "-m", "named");
    const named = git("rev-parse", "HEAD");
    // A commit the store holds that no ref reaches: what a lost collect leaves.
    const loose = git("commit-tree", "-m", "loose", `${named}^{tree}`);
    const close = (sha: string, code = 0): MuRun => ({
      verb: "agent close",
      argv: ["agent", "close", "a"],
      code,
      signal: null,
      ms: 1,
      stdout: `collected ${sha} from box:t into ${st.dir} (refs/mu/collected/main/a/job-1)\nclosed main/a\n`,
      line: "",
    });
    expect(unreachableCollects(st.dir, [close(named), close(loose, 5)])).toEqual([]);
    expect(unreachableCollects(st.dir, [close(named), close(loose)])).toEqual([
      `mu agent close a reported ${loose} collected; no ref in the checkout reaches it`,
    ]);
  } finally {
    st.done();
  }
});

it("takes percentiles by nearest rank", () => {
  const xs = Array.from({ length: 100 }, (_, i) => i + 1);
  expect(quantile(xs, 0.5)).toBe(50);
  expect(quantile(xs, 0.99)).toBe(99);
  expect(quantile([7], 0.99)).toBe(7);
  expect(quantile([], 0.5)).toBeNaN();
});

it("a short crew of real mu processes ends with every invariant held", () => {
  const r = spawnSync(
    process.execPath,
    [join(packageRoot(), "dist", "sim", "stress", "main.js"), "--agents", "2", "--seconds", "4"],
    { encoding: "utf8", timeout: 240_000, env: { PATH: process.env.PATH ?? "" } },
  );
  expect(r.stdout).toMatch(/\| agent spawn \| \d+ \| \d+ \|/);
  expect(r.stdout).toMatch(/^lock: \d+ waits for it over \d+ runs/m);
  expect(r.stdout).toContain("every invariant held");
  expect(r.status).toBe(0);
}, 300_000);

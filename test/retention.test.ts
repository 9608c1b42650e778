import { describe, expect, it } from "vitest";
import { readArchive } from "../host/store/archive.js";
import { type Database, openStore } from "../host/store/index.js";
import { retentionState } from "../host/store/retention.js";
import { stateNotices } from "../host/verbs/state.js";
import { VirtualCrash } from "../sim/virtual/fs.js";
import { virtualWorld } from "../sim/virtual/ports.js";
import { rng } from "../sim/virtual/rng.js";

// The retention rule (host/store/retention.ts) on the virtual disk: over many
// random mixes of live and ended jobs, pending intents and receipts in every
// state, a pass never drops or moves anything pending or owed, never changes
// what `mu state` reports, and every receipt ends up in exactly one place.
// A crash at every disk operation of a pass keeps all of that true.

const DAY = 86_400_000;
const MARGIN = 0;
type World = ReturnType<typeof virtualWorld>;

interface Receipt {
  msgId: string;
  workstream: string;
  agent: string;
  state: string;
  createdAt: number;
}

interface Snapshot {
  owned: string;
  receipts: Receipt[];
  notices: string;
}

/** Intents, jobs and agents whole (retention must never touch them), receipts, notices. */
function snapshot(db: Database, now: number): Snapshot {
  const dump = (sql: string) => JSON.stringify(db.exec(sql)[0]?.values ?? []);
  return {
    owned: [
      dump("SELECT * FROM intents ORDER BY id"),
      dump("SELECT * FROM jobs ORDER BY key"),
      dump("SELECT * FROM agents ORDER BY workstream, name"),
    ].join("\n"),
    receipts: (
      db.exec(
        "SELECT msg_id, workstream, agent, state, created_at FROM receipts ORDER BY msg_id",
      )[0]?.values ?? []
    ).map((r) => ({
      msgId: String(r[0]),
      workstream: String(r[1]),
      agent: String(r[2]),
      state: String(r[3]),
      createdAt: Number(r[4]),
    })),
    notices: JSON.stringify(stateNotices(db, now, MARGIN)),
  };
}

/** Receipts something still depends on, by the definitions of pending and owed, not by the rule's SQL. */
function owedReceipts(db: Database): Set<string> {
  const pendingSubjects = new Set(
    (db.exec("SELECT subject FROM intents")[0]?.values ?? []).map((r) => String(r[0])),
  );
  const liveSince = new Map(
    (db.exec("SELECT workstream, agent, created_at FROM jobs")[0]?.values ?? []).map((r) => [
      `${r[0]}/${r[1]}`,
      Number(r[2]),
    ]),
  );
  const owed = new Set<string>();
  for (const r of snapshot(db, 0).receipts) {
    const who = `${r.workstream}/${r.agent}`;
    const since = liveSince.get(who);
    if (
      r.state === "sending" ||
      pendingSubjects.has(`agent:${who}`) ||
      (since !== undefined && r.createdAt >= since)
    ) {
      owed.add(r.msgId);
    }
  }
  return owed;
}

let nextId = 0;
/** A random crew: agents with and without a live job, pending intents, receipts of every state and age. */
function addMix(db: Database, r: () => number, now: number): void {
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)] as T;
  const agents = 1 + Math.floor(r() * 6);
  for (let i = 0; i < agents; i++) {
    const ws = pick(["w", "v"]);
    const name = `a${Math.floor(r() * 8)}`;
    const age = () => Math.floor(r() * 20 * DAY);
    const hasJob = db.exec("SELECT 1 FROM jobs WHERE workstream = ? AND agent = ?", [ws, name]);
    if (hasJob.length === 0 && r() < 0.5) {
      const at = now - age();
      db.run(
        "INSERT INTO jobs (key, workstream, agent, host, plugin, instance, kind, view_kind, state, spec, owes_collect, created_at, updated_at) VALUES (?, ?, ?, 'h', 'p', 'i', 'k', 'detached', ?, '{}', ?, ?, ?)",
        [
          `k${nextId++}`,
          ws,
          name,
          pick(["starting", "running", "stopped"]),
          r() < 0.5 ? 1 : 0,
          at,
          at,
        ],
      );
    }
    db.run(
      "INSERT OR REPLACE INTO agents (workstream, name, incarnation, job_key, host, channel_plugin, channel, state, created_at) VALUES (?, ?, ?, 'k', 'h', 'p', 'c', ?, ?)",
      [ws, name, 1 + Math.floor(r() * 5), pick(["live", "closed", "placeholder"]), now - age()],
    );
    if (r() < 0.3) {
      db.run(
        "INSERT INTO intents (subject, method, plugin, key, params, sha256, instance, pgid, writer_pid, writer_start, written_at) VALUES (?, ?, 'p', ?, '{}', 'x', 'i', 1, 1, 's', ?)",
        [
          `agent:${ws}/${name}`,
          pick(["channel.send", "job.stop", "job.start"]),
          `i${nextId++}`,
          now - age(),
        ],
      );
    }
    const n = Math.floor(r() * 25);
    for (let m = 0; m < n; m++) {
      db.run(
        "INSERT INTO receipts (msg_id, workstream, agent, state, created_at) VALUES (?, ?, ?, ?, ?)",
        [
          `m${nextId++}`,
          ws,
          name,
          pick(["sending", "accepted", "not-accepted", "unknown"]),
          now - age(),
        ],
      );
    }
  }
}

/** What the hot database and the segments it vouches for hold, after a restart if need be. */
async function holdings(w: World, env: Record<string, string>) {
  const ports = w.ports(env);
  const store = openStore(ports);
  const { snap, st } = await w.clock.run(
    store.read((db) => ({ snap: snapshot(db, w.clock.now()), st: retentionState(db) })),
  );
  const archived = await w.clock.run(readArchive(ports, store.path, st.archiveId, st.archiveSeq));
  return { snap, archived };
}

/** Every receipt of `before` is in exactly one place, unchanged; every owed one stayed. */
function expectKept(
  before: Snapshot,
  owed: Set<string>,
  after: Snapshot,
  archived: { msgId: string }[],
  why: string,
) {
  const hot = new Map(after.receipts.map((r) => [r.msgId, r]));
  const cold = archived.map(({ msgId, workstream, agent, state, createdAt }) => ({
    msgId,
    workstream,
    agent,
    state,
    createdAt,
  }));
  expect(new Set(cold.map((r) => r.msgId)).size, `${why}: an archived row twice`).toBe(cold.length);
  for (const r of cold) expect(hot.has(r.msgId), `${why}: ${r.msgId} in both`).toBe(false);
  const all = [...after.receipts, ...cold].sort((a, b) => (a.msgId < b.msgId ? -1 : 1));
  expect(all, `${why}: a receipt lost or changed`).toEqual(before.receipts);
  for (const id of owed) expect(hot.has(id), `${why}: owed ${id} moved`).toBe(true);
  expect(after.owned, `${why}: intents, jobs or agents changed`).toBe(before.owned);
}

describe("the retention rule", () => {
  it("never moves anything pending or owed, keeps mu state's report, and loses nothing (80 random crews, three passes each)", async () => {
    let movedAny = 0;
    for (let seed = 1; seed <= 80; seed++) {
      const r = rng(seed);
      const w = virtualWorld(seed);
      const afterMs = [0, DAY, 7 * DAY][seed % 3] as number;
      const env = { MU_RETAIN_AFTER_MS: String(afterMs), MU_RETAIN_EVERY_MS: String(DAY) };
      const store = openStore(w.ports(env));
      // The database's first pass only draws the archive's id.
      await w.clock.run(store.write(() => {}));
      let earlier = 0;
      for (let round = 0; round < 3; round++) {
        // Each round adds to the crew and runs the pass that is due by then.
        const now = w.clock.now();
        const seen = await w.clock.run(
          store.write((db) => {
            addMix(db, r, now);
            return { snap: snapshot(db, now), owed: owedReceipts(db), cutoff: now - afterMs };
          }),
        );
        const { snap, archived } = await holdings(w, env);
        const why = `seed ${seed} round ${round}`;
        // Earlier rounds' segments hold what earlier passes moved.
        expectKept(seen.snap, seen.owed, snap, archived.slice(earlier), why);
        earlier = archived.length;
        expect(snap.notices, `${why}: mu state changed`).toBe(seen.snap.notices);
        // Not vacuous: whatever nothing depends on and is old enough did move.
        for (const x of snap.receipts) {
          const movable = !seen.owed.has(x.msgId) && x.createdAt < seen.cutoff;
          expect(movable, `${why}: ${x.msgId} should have moved`).toBe(false);
        }
        movedAny += seen.snap.receipts.length - snap.receipts.length;
        await w.clock.advance(DAY + 1);
      }
    }
    expect(movedAny).toBeGreaterThan(300);
  });
});

describe("a retention pass cut short by a power cut", () => {
  // Set up so that nothing is old enough yet, then a first pass two hours
  // later moves what is older than 12 days (so a segment exists and the
  // archive has its id); the pass under test is due two hours after that
  // and moves every receipt nothing depends on.
  const hold = { MU_RETAIN_AFTER_MS: String(365 * DAY) };
  const first = { MU_RETAIN_AFTER_MS: String(12 * DAY), MU_CLOCK_OFFSET_MS: String(2 * 3_600_000) };
  const pass = { MU_RETAIN_AFTER_MS: "0", MU_CLOCK_OFFSET_MS: String(4 * 3_600_000) };
  const crew = async () => {
    const w = virtualWorld(7);
    const r = rng(7);
    nextId = 0;
    for (let i = 0; i < 4; i++) {
      await w.clock.run(openStore(w.ports(hold)).write((db) => addMix(db, r, w.clock.now())));
    }
    await w.clock.run(openStore(w.ports(first)).write(() => {}));
    return w;
  };
  const commit = (w: World) =>
    w.clock.run(
      openStore(w.ports(pass)).write((db) =>
        db.run(
          "INSERT INTO tasks (id, state, claimed_by, created_at) VALUES ('t', 'open', NULL, 0)",
        ),
      ),
    );
  const restart = (w: World) => {
    w.processes.end(w.processes.current.pid);
    w.processes.current = w.processes.start();
    w.fs.recover();
  };

  it("loses and duplicates nothing at any disk operation, and the next commit finishes the move", async () => {
    const dry = await crew();
    const held = await holdings(dry, pass);
    expect(held.archived.length, "the first pass moved rows").toBeGreaterThan(10);
    // Everything the crew ever had, wherever it is now.
    const before = {
      ...held.snap,
      receipts: [...held.snap.receipts, ...held.archived.map(({ table: _, ...r }) => r)].sort(
        (a, b) => (a.msgId < b.msgId ? -1 : 1),
      ),
    };
    const owed = await dry.clock.run(openStore(dry.ports(pass)).read(owedReceipts));
    const start = dry.fs.ops.length;
    await commit(dry);
    const steps = dry.fs.ops.length - start;
    const moved = await holdings(dry, pass);
    expect(
      moved.archived.length - held.archived.length,
      "the pass under test moves rows",
    ).toBeGreaterThan(20);
    expect(steps).toBeGreaterThan(10);
    const outcomes = new Set<string>();
    for (let n = 1; n <= steps; n++) {
      const w = await crew();
      w.fs.crashAfter(n);
      const r = await commit(w).then(
        () => "returned",
        (err: unknown) => err,
      );
      if (r !== "returned") expect(r).toBeInstanceOf(VirtualCrash);
      const op = w.fs.ops.at(-1);
      restart(w);
      const cut = await holdings(w, pass);
      expectKept(before, owed, cut.snap, cut.archived, `crash at op ${n} (${op})`);
      outcomes.add(cut.archived.length === held.archived.length ? "old" : "moved");
      // The next commit, by a new mu, leaves it as if no crash had happened.
      await commit(w).catch(() => {});
      const next = await holdings(w, pass);
      expectKept(before, owed, next.snap, next.archived, `after crash at op ${n} (${op})`);
      expect(next.snap.receipts, `after crash at op ${n}`).toEqual(moved.snap.receipts);
    }
    // The sweep reached both sides of the commit.
    expect([...outcomes].sort()).toEqual(["moved", "old"]);
  });
});

describe("a receipt written in its job's creation millisecond", () => {
  it("stays while the job runs, however old (an at-start first prompt)", async () => {
    const w = virtualWorld(11);
    const env = { MU_RETAIN_AFTER_MS: String(7 * DAY), MU_RETAIN_EVERY_MS: "0" };
    const store = openStore(w.ports(env));
    const at = w.clock.now();
    await w.clock.run(
      store.write((db) => {
        db.run(
          "INSERT INTO jobs (key, workstream, agent, host, plugin, instance, kind, view_kind, state, spec, owes_collect, created_at, updated_at) VALUES ('k1', 'w', 'a', 'h', 'p', 'i', 'k', 'detached', 'running', '{}', 0, ?, ?)",
          [at, at],
        );
        for (const [id, t] of [
          ["first-prompt", at],
          ["before-the-job", at - 1],
        ] as const)
          db.run(
            "INSERT INTO receipts (msg_id, workstream, agent, state, created_at) VALUES (?, 'w', 'a', 'accepted', ?)",
            [id, t],
          );
      }),
    );
    await w.clock.advance(8 * DAY);
    // Two passes: the first only draws the archive's id.
    for (let i = 0; i < 2; i++) await w.clock.run(store.write(() => {}));
    const { snap, archived } = await holdings(w, env);
    expect(snap.receipts.map((r) => r.msgId)).toEqual(["first-prompt"]);
    // Not vacuous: the one from before the job did move.
    expect(archived.map((r) => r.msgId)).toEqual(["before-the-job"]);
  });
});

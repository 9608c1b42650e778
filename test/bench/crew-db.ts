import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { realPorts } from "../../host/ports/real.js";
import { openStore } from "../../host/store/index.js";
import { retentionState } from "../../host/store/retention.js";
import { medianCommitMs } from "./commit.js";

// A long-lived crew's database: `agents` names, each spawned `jobsPerAgent`
// times over the last 200 days (the jobs table keeps only the live one of
// each; the ended ones left their receipts), `perJob` deliveries per job.
// Retention runs as mu runs it, on the commits themselves, until it has
// nothing left to move; then one intent's commit is measured.

const DAY = 86_400_000;

export interface CrewCommit {
  jobs: number;
  live: number;
  receipts: number;
  ms: number;
  hotBytes: number;
  archived: number;
  /** The slowest commit that ran a pass while the backlog drained. */
  passMs: number;
}

export async function crewCommitAt(
  agents: number,
  jobsPerAgent: number,
  perJob: number,
  rounds = 5,
): Promise<CrewCommit> {
  const dir = mkdtempSync(join(tmpdir(), "mu-bench-crew-"));
  try {
    const ports = realPorts({ MU_STATE_DIR: dir });
    const store = openStore(ports);
    const now = Date.now();
    const spacing = (200 * DAY) / jobsPerAgent;
    await store.write((db) => {
      const rec = db.prepare(
        "INSERT INTO receipts (msg_id, workstream, agent, state, created_at) VALUES (?, 'w', ?, 'accepted', ?)",
      );
      for (let a = 0; a < agents; a++) {
        for (let j = 0; j < jobsPerAgent; j++) {
          const live = j === jobsPerAgent - 1;
          const started = live ? now - DAY : now - 200 * DAY + j * spacing;
          for (let m = 0; m < perJob; m++) rec.run([`m${a}-${j}-${m}`, `a${a}`, started + 1 + m]);
          if (!live) continue;
          db.run(
            "INSERT INTO jobs (key, workstream, agent, host, plugin, instance, kind, view_kind, state, spec, created_at, updated_at) VALUES (?, 'w', ?, 'h', 'p', 'i', 'k', 'detached', 'running', '{}', ?, ?)",
            [`k${a}`, `a${a}`, started, started],
          );
          db.run(
            "INSERT INTO agents (workstream, name, incarnation, job_key, host, channel_plugin, channel, state, created_at) VALUES ('w', ?, ?, ?, 'h', 'p', 'c', 'live', ?)",
            [`a${a}`, jobsPerAgent, `k${a}`, started],
          );
        }
      }
      rec.free();
    });
    // Each commit moves at most a batch; drain the backlog as later verbs would.
    let passMs = 0;
    for (let i = 0; i < 1_000; i++) {
      const st = await store.read(retentionState);
      if (st.nextAt > Date.now()) break;
      const t0 = performance.now();
      await store.write(() => {});
      passMs = Math.max(passMs, performance.now() - t0);
    }
    const ms = await medianCommitMs(store, rounds);
    const st = await store.read(retentionState);
    return {
      jobs: agents * jobsPerAgent,
      live: agents,
      receipts: agents * jobsPerAgent * perJob,
      ms,
      hotBytes: statSync(join(dir, "mu.db")).size,
      archived: st.archived,
      passMs,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

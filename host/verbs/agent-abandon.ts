import type { Io } from "../cli/io.js";
import { intentsFor } from "../effects/journal.js";
import { RefusedError } from "../errors.js";
import { findAgent } from "../jobs/agent-host.js";
import { fencedRead, jobTarget, resolveAgent } from "../jobs/job-calls.js";
import { rollBackSpawn } from "../jobs/job-rules.js";
import { agentSubject, jobByKey } from "../jobs/records.js";
import { openStore } from "../store/index.js";
import { muxFor } from "../view/mux.js";
import type { JobStatus } from "./wait-liveness.js";
import { withPlugins } from "./with-plugins.js";

// mu agent forget --abandon: ends mu's record of an agent whose job no verb
// can end any more: its host is gone for good (every close fails), or its
// tree was removed by hand (every final collect fails). mu stops tracking
// the job and says so; it refuses while the job answers that it runs (close
// it instead) or while an effect on it is still pending.

export async function agentAbandon(
  io: Io,
  name: string,
  opts: { workstream?: string },
): Promise<void> {
  const ws = opts.workstream ?? "main";
  const store = openStore(io.ports);
  const close = `mu agent close ${name} -w ${ws}`;
  await withPlugins(io, async (sup) => {
    await resolveAgent(io, store, sup, ws, name, `mu agent forget ${name} --abandon -w ${ws}`);
    const { job, agent, host } = await store.read((db) => findAgent(db, ws, name));
    const pending = await store.read((db) => intentsFor(db, agentSubject(ws, name)));
    if (pending.length > 0) {
      throw new RefusedError(
        "forget.pending",
        "agent",
        `${ws}/${name} still has a pending ${pending.map((i) => i.method).join(", ")}`,
        { hint: `settle it first: ${close}, or mu agent forget ${name} -w ${ws} for a start` },
      );
    }
    if (job.state === "running") {
      // Only a job mu cannot reach, or one its plugin no longer runs, is let go.
      let status: JobStatus | undefined;
      try {
        const target = jobTarget(host, job, agent?.incarnation ?? 1);
        status = (await fencedRead(io, sup, host, job, "job.status", { target }))
          .result as JobStatus;
      } catch {
        status = undefined;
      }
      if (status?.state === "running") {
        throw new RefusedError(
          "forget.runs",
          "agent",
          `${ws}/${name}'s job still runs on ${job.host} and its plugin answers for it`,
          { hint: `end it with ${close}` },
        );
      }
    }
    const gone = await store.write((db) => {
      const j = jobByKey(db, job.key);
      // The agent's row closed, a --task reopened, as a rolled-back start's.
      if (j) rollBackSpawn(db, j.key, "unknown");
      return j;
    });
    const mux = muxFor(io.ports);
    for (const pane of await mux.panesOf(ws, name)) await mux.kill(pane);
    if (agent?.pane) await mux.kill(agent.pane);
    // Deliveries to it can never be taken now.
    await resolveAgent(io, store, sup, ws, name, close);
    io.out(
      `forgot ${ws}/${name}: mu no longer tracks its job ${job.key} on ${job.host}; if it still runs there, stop it yourself\n`,
    );
    if (gone?.taskId) io.out(`task ${gone.taskId} is open again\n`);
    if (gone?.site) io.out(`its tree ${gone.site} stays on ${gone.host}, if it is still there\n`);
  });
}

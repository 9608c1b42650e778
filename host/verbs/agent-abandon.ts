import type { Io } from "../cli/io.js";
import { DELIVERIES } from "../effects/decide.js";
import { deleteIntent, intentsFor } from "../effects/journal.js";
import { MuError, RefusedError } from "../errors.js";
import { findAgent } from "../jobs/agent-host.js";
import { fencedRead, jobTarget, resolveAgent } from "../jobs/job-calls.js";
import { jobRules, rollBackSpawn } from "../jobs/job-rules.js";
import { agentOf, agentSubject, jobByKey, jobOf, putAgent } from "../jobs/records.js";
import { letGoTreesLeft, whose } from "../jobs/trees-left.js";
import { anotherLive } from "../ports/another-live.js";
import { openStore } from "../store/index.js";
import { pauseAt } from "../testbed-pause.js";
import { planted, TESTBED_BUILD } from "../testbed-plant.js";
import { muxFor } from "../view/mux.js";
import { refuseWhileWriterLives } from "./spawn/record.js";
import type { JobStatus } from "./wait-liveness.js";
import { withPlugins } from "./with-plugins.js";

// mu agent forget --abandon: ends mu's record of an agent whose job no verb
// can end any more: its host is gone for good (every close fails), or its
// tree was removed by hand (every final collect fails). mu stops tracking
// the job and says so, dropping what is pending on it (a stop, deliveries);
// it refuses while the job answers that it runs (close it instead), while
// its start is pending (forget without --abandon), or while another mu
// is at work on it.

export async function agentAbandon(
  io: Io,
  name: string,
  opts: { workstream?: string },
): Promise<void> {
  const ws = opts.workstream ?? "main";
  const store = openStore(io.ports);
  const close = `mu agent close ${name} -w ${ws}`;
  await withPlugins(io, async (sup) => {
    // The rules first: a stop reissued now, say, ends it the ordinary way.
    // What they leave unresolved is what --abandon is for; another mu still
    // at work on the agent is not.
    const before = await store.read((db) => jobOf(db, ws, name));
    try {
      await resolveAgent(io, store, sup, ws, name, `mu agent forget ${name} --abandon -w ${ws}`);
    } catch (err) {
      if (err instanceof RefusedError && err.code.startsWith("effect.guard.")) throw err;
      if (!(err instanceof MuError)) throw err;
    }
    // A name whose job is gone may still be owed the removal of trees (its
    // closes' or an unstarted spawn's): on a host gone for good no close
    // removes them, so they are let go instead.
    if (!before) {
      const trees = await letGoTreesLeft(io, store, ws, name);
      for (const t of trees)
        io.out(
          `forgot the tree ${t.site} ${whose(t)} left on ${t.host}; if it is still there, remove it yourself (mu host exec)\n`,
        );
      if (trees.length > 0) return;
    }
    const found = await store.read((db) =>
      before && !jobOf(db, ws, name) ? undefined : findAgent(db, ws, name),
    );
    if (!found) {
      // Ended, not forgotten: as forget does when the rules settle its start.
      throw new RefusedError(
        "forget.settled",
        "agent",
        `${ws}/${name}'s job ${before?.key} was ended meanwhile (by a stop settled just now, or by another mu); nothing was forgotten`,
        { hint: "see: mu agent list" },
      );
    }
    const { job, agent, host } = found;
    const pending = await store.read((db) => intentsFor(db, agentSubject(ws, name)));
    const pendingStart = () =>
      new RefusedError(
        "forget.pending-start",
        "agent",
        `${ws}/${name}'s start is still pending; --abandon lets go of a job that started`,
        { hint: `settle the start with ${close}, or end it with mu agent forget ${name} -w ${ws}` },
      );
    if (pending.some((i) => i.method === "job.start")) throw pendingStart();
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
    // Listed while the name is still held: once the commit frees it another
    // mu may spawn it again, and that spawn's view is not this agent's.
    const mux = muxFor(io.ports);
    const panes = await mux.panesOf(ws, name);
    const now = io.ports.clock.now();
    const out = await store.write((db) => {
      // Again in this commit: another mu may have closed the job meanwhile
      // (and the name been spawned again), or begun a start.
      if (jobOf(db, ws, name)?.key !== job.key) return { changed: true as const };
      const j = jobByKey(db, job.key);
      // A spawn still at work on the record (its start not journaled yet) keeps it.
      if (j) refuseWhileWriterLives(io, j);
      // What is pending on it goes too: a stop that cannot be sent, a
      // delivery no job will ever take (its receipt stays unknown). Read in
      // this commit, so one another mu is at work on (written since the
      // rules ran, say) is left to it.
      const dropped = intentsFor(db, agentSubject(ws, name));
      if (dropped.some((i) => i.method === "job.start")) throw pendingStart();
      const busy = dropped
        .flatMap((i) => [i.writer, i.resolver])
        .find((p) => anotherLive(io.ports.liveness, p));
      if (busy) return { busy: busy.pid };
      for (const i of dropped) {
        deleteIntent(db, i);
        if (DELIVERIES.includes(i.method)) jobRules.abandon?.(db, i, now);
      }
      // The agent's row closed, a --task reopened, as a rolled-back start's.
      const view = agentOf(db, ws, name)?.pane ?? null;
      if (j) rollBackSpawn(db, j.key, "unknown");
      // The closed row names its view until the view is killed (forgetLeftView,
      // in resolveAgent below): a mu that dies before the kill leaves the next
      // verb on the name a pane to kill, not one nothing records.
      const a = agentOf(db, ws, name);
      if (a && view !== null) putAgent(db, { ...a, pane: view });
      return { gone: j, dropped };
    });
    if ("changed" in out) {
      throw new RefusedError(
        "agent.changed",
        "agent",
        `${ws}/${name}'s job ${job.key} was closed by another mu meanwhile; nothing was forgotten`,
        { hint: `see: mu agent list` },
      );
    }
    if ("busy" in out) {
      throw new RefusedError(
        "effect.guard.resolver-alive",
        "agent",
        `${ws}/${name} is in the hands of mu pid ${out.busy}`,
        { hint: "wait for that mu to finish, then run the verb again" },
      );
    }
    const { gone, dropped } = out;
    for (const i of dropped)
      io.err(`mu: journal: ${i.method} for ${i.subject} (key ${i.key}): abandoned\n`);
    if (TESTBED_BUILD) await pauseAt("forget.committed", io.ports, sup, host.reg);
    const sweep =
      TESTBED_BUILD && planted(io.ports.env, "sweep-after-commit")
        ? await mux.panesOf(ws, name)
        : panes;
    for (const pane of sweep) await mux.kill(pane);
    if (agent?.pane) await mux.kill(agent.pane);
    // Deliveries to it can never be taken now, and the row lets go of the view.
    await resolveAgent(io, store, sup, ws, name, close);
    io.out(
      `forgot ${ws}/${name}: mu no longer tracks its job ${job.key} on ${job.host}; if it still runs there, stop it yourself\n`,
    );
    if (gone?.taskId) io.out(`task ${gone.taskId} is open again\n`);
    if (gone?.site) io.out(`its tree ${gone.site} stays on ${gone.host}, if it is still there\n`);
  });
}

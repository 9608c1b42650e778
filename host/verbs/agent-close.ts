import type { Database } from "sql.js";
import type { Io } from "../cli/io.js";
import { intentsFor } from "../effects/journal.js";
import { RefusedError, UnavailableError, UsageError } from "../errors.js";
import { findAgent } from "../jobs/agent-host.js";
import {
  attachView,
  jobPlugin,
  jobTarget,
  leftView,
  openPane,
  resolveAgent,
  stopJob,
} from "../jobs/job-calls.js";
import { agentAsRead, noDeliveryUnderWay } from "../jobs/job-guard.js";
import { takeBackUnstarted } from "../jobs/job-rules.js";
import { agentOf, agentSubject, jobByKey, jobOf, putAgent } from "../jobs/records.js";
import { removeTreesLeft, sayTrees, treesLeftOf } from "../jobs/trees-left.js";
import { openStore } from "../store/index.js";
import { pauseAt } from "../testbed-pause.js";
import { planted, TESTBED_BUILD } from "../testbed-plant.js";
import { livesThroughWindow, muxFor, requireCommandLines, viewReadyMs } from "../view/mux.js";
import { finalCollect } from "./close-collect.js";
import { refuseWhileWriterLives } from "./spawn/record.js";
import { closeCommand } from "./spawn/remedy.js";
import { withPlugins } from "./with-plugins.js";

// mu agent close and mu agent reattach: the two things a person does to an
// agent's view. A bound view's death ends its job, so close kills the view
// first; a detached job outlives its view, so close stops the job first and
// reattach can open a new view on the same row.

export async function agentClose(
  io: Io,
  name: string,
  opts: { workstream?: string },
): Promise<void> {
  const ws = opts.workstream ?? "main";
  const store = openStore(io.ports);
  const mux = muxFor(io.ports);
  await withPlugins(io, async (sup) => {
    // A job already gone may still leave the name something to settle: a
    // delivery to it, or a view its stop outlived (a close killed between
    // the two). Those the close finishes; with neither, there is no agent.
    const first = await store.read((db) =>
      !jobOf(db, ws, name) && leftToSettle(db, ws, name) ? undefined : findAgent(db, ws, name),
    );
    const next = `mu agent close ${name} -w ${ws}`;
    await resolveAgent(io, store, sup, ws, name, next);
    // A pending stop resolved above may have ended the record already.
    const found = await store.read((db) =>
      jobOf(db, ws, name) ? findAgent(db, ws, name) : undefined,
    );
    // Deliveries to the job just ended can never be taken now: settled here
    // (delivery.job-ended), they do not follow the name to its next agent.
    const settleEnded = () => resolveAgent(io, store, sup, ws, name, next);
    // Last on every way out: the trees closes of the name left on their hosts.
    const removeTrees = async (own?: string) =>
      sayTrees(io, "close", await removeTreesLeft(io, store, sup, ws, name), own);
    if (!found) {
      if (first?.agent?.pane) await mux.kill(first.agent.pane);
      await settleEnded();
      await removeTrees();
      io.out(`closed ${ws}/${name}\n`);
      return;
    }
    const { job, agent, host } = found;
    if (job.state === "starting") {
      // Resolved above and still starting: its start was never journaled, so
      // never sent. Nothing runs; the attempt is taken back, and a tree its
      // site step may have made is owed its removal in the same commit.
      refuseWhileWriterLives(io, job);
      // Again in the commit: a resumed spawn may have taken it over since.
      await store.write((db) => {
        const cur = jobByKey(db, job.key);
        if (cur) {
          refuseWhileWriterLives(io, cur);
          takeBackUnstarted(db, cur, io.ports.clock.now());
        }
      });
      await settleEnded();
      await removeTrees(job.key);
      io.out(`closed ${ws}/${name} (it never started)\n`);
      return;
    }
    await jobPlugin(sup, host, job);
    const pane = agent?.pane ?? null;
    if (job.state === "running") {
      const target = jobTarget(host, job, agent?.incarnation ?? 1);
      // Checked before a bound view's kill ends the job, and in the stop's commit.
      const quiet = (db: Database) => noDeliveryUnderWay(db, job, io.ports);
      await store.read(quiet);
      if (pane && job.viewKind === "bound") await mux.kill(pane);
      await stopJob(io, store, sup, host, job, target, quiet);
      if (TESTBED_BUILD) await pauseAt("close.stopped", io.ports, sup, host.reg);
      // The stop's commit left the row naming the view, so a crash before
      // this kill leaves it to the next verb; the row forgets it in the
      // close's next commit (the collect's, else the settle's below).
      if (pane && job.viewKind === "detached") await mux.kill(pane);
    }
    // And any pane of this agent nothing recorded.
    for (const orphan of await mux.panesOf(ws, name)) await mux.kill(orphan);
    if (job.owesCollect) await finalCollect(io, store, sup, host, job, pane);
    await settleEnded();
    await removeTrees(job.key);
    io.out(`closed ${ws}/${name}\n`);
  });
}

/** Whether the name's records still hold work for a close once its job is gone. */
function leftToSettle(db: Database, ws: string, name: string): boolean {
  return (
    intentsFor(db, agentSubject(ws, name)).length > 0 ||
    leftView(db, ws, name) !== null ||
    treesLeftOf(db, ws, name).length > 0
  );
}

export async function agentReattach(
  io: Io,
  name: string,
  opts: { workstream?: string },
): Promise<void> {
  const ws = opts.workstream ?? "main";
  const store = openStore(io.ports);
  const mux = muxFor(io.ports);
  const { job } = await store.read((db) => findAgent(db, ws, name));
  if (job.viewKind !== "detached") {
    throw new UsageError(
      "reattach.bound",
      "agent",
      `${ws}/${name}'s view is bound to its job, so it cannot be reattached`,
      {
        hint: `a bound job ends with its view; spawn it again: mu agent close ${name} -w ${ws}`,
      },
    );
  }
  requireCommandLines(mux, "reattach.mux");
  await withPlugins(io, async (sup) => {
    await resolveAgent(io, store, sup, ws, name, `mu agent reattach ${name} -w ${ws}`);
    const { job: j, agent, host } = await store.read((db) => findAgent(db, ws, name));
    // A close stopped this job and still owes its final collect: nothing runs
    // to attach to, and a view recorded now would name a live agent that is not.
    if (j.state === "stopped") {
      throw new RefusedError(
        "reattach.stopped",
        "agent",
        `${ws}/${name}'s job is stopped and owes its final collect, so there is nothing to reattach`,
        { hint: `finish the close: ${closeCommand(ws, name)}` },
      );
    }
    // A close, forget or other reattach since that read: the agent changed
    // under this reattach, whatever failed after it.
    const refuseIfChanged = async (pane?: string) => {
      if (!(await store.read((db) => agentAsRead(db, j, agent))))
        throw changedMeanwhile(ws, name, pane);
    };
    await jobPlugin(sup, host, j);
    const view = await attachView(
      io,
      sup,
      host,
      j,
      jobTarget(host, j, agent?.incarnation ?? 1),
    ).catch(async (err: unknown) => {
      // A job another mu stopped meanwhile has nothing to attach to.
      await refuseIfChanged();
      throw err;
    });
    // Panes nothing records (a reattach that died before it wrote its row) go
    // first. The row is read again here: the attach took a while, and another
    // reattach may have recorded its own view since.
    const named = await store.read((db) => agentOf(db, ws, name)?.pane ?? null);
    for (const orphan of await mux.panesOf(ws, name))
      if (orphan !== agent?.pane && orphan !== named) await mux.kill(orphan);
    // A view that fails to start, even after the backend reported it, leaves
    // the row's pane as it was: the row changes only once it lived through
    // the readiness window.
    const openedAt = io.ports.clock.now();
    const pane = await openPane(mux, ws, name, view, `run mu agent reattach ${name} -w ${ws}`);
    const old = agent?.pane ?? null;
    const lives =
      TESTBED_BUILD && planted(io.ports.env, "reattach-without-window")
        ? await mux.alive(pane.id)
        : await livesThroughWindow(mux, io.ports, pane.id, openedAt);
    if (!lives) {
      await mux.kill(pane.id);
      // A close or forget meanwhile kills every pane of the name, this one too.
      await refuseIfChanged(pane.id);
      throw new UnavailableError(
        "reattach.died",
        "view",
        `the new view of ${ws}/${name} (pane ${pane.id}) died within ${viewReadyMs(io.ports.env)} ms of opening`,
        {
          hint: old ? `the agent keeps its view ${old}; try again` : "try again",
        },
      );
    }
    // Decided in the commit: a close, forget or other reattach since the
    // read would otherwise have its row named live again, on a new view.
    const asRead = await store.write((db) => {
      if (!agentAsRead(db, j, agent)) return false;
      const a = agentOf(db, ws, name);
      if (a) putAgent(db, { ...a, pane: pane.id, state: "live" });
      return true;
    });
    if (!asRead) {
      await mux.kill(pane.id);
      throw changedMeanwhile(ws, name, pane.id);
    }
    if (old && old !== pane.id) await mux.kill(old);
    io.out(`reattached ${ws}/${name} (view ${pane.id})\n`);
  });
}

/** A reattach whose agent another mu closed, forgot or reattached while it opened its view. */
function changedMeanwhile(ws: string, name: string, pane?: string): RefusedError {
  const what = pane ? `, so this reattach closed the view it opened (pane ${pane})` : "";
  return new RefusedError(
    "agent.changed",
    "agent",
    `${ws}/${name} was closed, forgotten or reattached by another mu meanwhile${what}`,
    {
      hint: `see: mu agent list; if ${ws}/${name} is there, run mu agent reattach ${name} -w ${ws} again`,
    },
  );
}

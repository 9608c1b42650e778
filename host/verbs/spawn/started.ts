import { crashPoint } from "../../crash-point.js";
import { classify, RefusedError, UnavailableError, UnknownOutcomeError } from "../../errors.js";
import {
  forgetLeftView,
  type JobTarget,
  jobPlugin,
  jobTarget,
  stopJob,
} from "../../jobs/job-calls.js";
import { agentOf, deleteJob, type JobRecord, jobByKey } from "../../jobs/records.js";
import { oweRemoval, removeTreesLeft, sayTrees } from "../../jobs/trees-left.js";
import type { SpawnCtx } from "./context.js";
import { closeCommand, closedMeanwhile, spawnAgainCommand, spawnAgainOrClose } from "./remedy.js";

// A spawned job that may run: what the view and readiness steps share, and
// how either undoes the spawn. A failure after the start stops the job
// before the record goes, and the tree's removal is owed in that commit, so
// nothing is left half-done or on a host with nothing naming it.

export interface Started {
  j: JobRecord;
  incarnation: number;
  target: JobTarget;
  /** The channel the plugin names now. */
  channel: string;
  /** Stops the job, then lets the record go, owing its tree's removal, and removes it; always throws. */
  fail(pane: string | null, why: string): Promise<never>;
}

export async function startedJob(ctx: SpawnCtx, j: JobRecord): Promise<Started> {
  const { store, sup, h } = ctx;
  const row = await store.read((db) => agentOf(db, j.workstream, j.agent));
  const incarnation = row?.incarnation ?? 1;
  const target = jobTarget(h, j, incarnation);
  // Every call below names the recorded job: only to its instance.
  const { hello } = await jobPlugin(sup, h, j);
  const channel = hello.seams.channel?.name ?? "";
  return { j, incarnation, target, channel, fail: (pane, why) => undo(ctx, j, target, pane, why) };
}

async function undo(
  ctx: SpawnCtx,
  j: JobRecord,
  target: JobTarget,
  pane: string | null,
  why: string,
): Promise<never> {
  const { io, store, sup, h, mux } = ctx;
  const ws = j.workstream;
  const name = j.agent;
  if (pane && j.viewKind === "bound") await mux.kill(pane);
  let stopError: unknown;
  try {
    await stopJob(io, store, sup, h, j, target);
  } catch (err) {
    stopError = err;
  }
  if (pane && j.viewKind === "detached") await mux.kill(pane);
  // A stop that went through left the row naming the view until now.
  await forgetLeftView(io, store, ws, name);
  if (stopError instanceof RefusedError && stopError.code === "agent.changed") {
    // Another mu closed the agent (or is closing it) while it came up: the
    // job and its view are that close's now, and this spawn has nothing to undo.
    throw closedMeanwhile(ws, name, j.host, "while this spawn waited for it to come up");
  }
  if (stopError instanceof UnknownOutcomeError) {
    // The stop is journaled and pending: say so, with the verb that settles it.
    throw new UnknownOutcomeError(
      "spawn.failed.stop-unknown",
      "agent",
      `${ws}/${name} did not come up: ${why}; its job.stop may or may not have happened`,
      { hint: `run mu agent close ${name} -w ${ws} to settle it` },
    );
  }
  if (stopError !== undefined) {
    throw new UnavailableError(
      "spawn.failed.stop-failed",
      "agent",
      `${ws}/${name} did not come up: ${why}; stopping its job failed too (${(stopError as Error).message})`,
      // The record is left as a spawn cut short there leaves it, so the same
      // spawn takes it on, as mu state says.
      {
        hint: `the job may still run: ${spawnAgainOrClose(
          pane ? "finish" : "resume",
          spawnAgainCommand(ws, name, j.host),
          closeCommand(ws, name),
        )}`,
      },
    );
  }
  // Stopped: the record goes, and in the same commit the tree's removal is
  // owed, so a mu killed before the removal, or a removal that fails, leaves
  // the tree listed by mu state for the next close or spawn of the name.
  await store.write((db) => {
    const cur = jobByKey(db, j.key);
    if (!cur) return;
    deleteJob(db, cur.key);
    if (cur.site && cur.siteSha)
      oweRemoval(db, cur, cur.site, cur.siteSha, io.ports.clock.now(), "spawn-stopped");
  });
  await crashPoint("spawn.dropped", io.ports);
  if (j.site) {
    // Why the agent did not come up is this spawn's failure; whatever became
    // of its tree (another mu removing it meanwhile, a removal that could
    // not run) is a line before it, never in its place.
    try {
      sayTrees(io, "spawn", await removeTreesLeft(io, store, sup, ws, name), j.key);
    } catch (err) {
      io.err(`${classify(err).line}\n`);
    }
  }
  throw new UnavailableError(
    "spawn.failed",
    "agent",
    `${ws}/${name} did not come up: ${why}; the job was stopped`,
    {
      hint: "see the plugin's and the backend's state, then spawn again",
    },
  );
}

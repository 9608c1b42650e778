import type { Io } from "../cli/io.js";
import { findLinkHost, sameInstance } from "../hosts/link-host.js";
import type { JobRecord } from "../jobs/records.js";
import { planSite } from "../jobs/site.js";
import { removeTreesLeft, sayTrees } from "../jobs/trees-left.js";
import { openStore } from "../store/index.js";
import { muxFor } from "../view/mux.js";
import type { SpawnCtx, SpawnOptions } from "./spawn/context.js";
import { awaitReady } from "./spawn/readiness.js";
import { priorRecord, writeRecord } from "./spawn/record.js";
import { refuseArgs, refuseOnHost } from "./spawn/refusals.js";
import { makeSpawnSite } from "./spawn/site.js";
import { planStart, startJob } from "./spawn/start.js";
import { startedJob } from "./spawn/started.js";
import { openView } from "./spawn/view.js";
import { withPlugins } from "./with-plugins.js";

// mu agent spawn on a plugin host: the spec's six steps in order, each one
// before the next one's effect. Each step is a module under spawn/.

export type { SpawnOptions } from "./spawn/context.js";

export async function agentSpawn(io: Io, name: string, opts: SpawnOptions): Promise<void> {
  // 1. Refusals, before anything is written.
  const req = refuseArgs(name, opts);
  const store = openStore(io.ports);
  const h = await store.read((db) => findLinkHost(db, opts.host));
  const mux = muxFor(io.ports);
  const declared = refuseOnHost(h, req, mux);
  // A --from that names no commit, or a host with no repository, is refused here too.
  const plan = opts.worktree
    ? planSite(io.ports.cwd, h, opts.host, opts.from, req.ws, name)
    : undefined;
  await withPlugins(io, async (sup) => {
    const ctx: SpawnCtx = { io, store, sup, h, mux };
    // What an earlier spawn of the name left: a started job resumes at its view.
    const prior = await priorRecord(ctx, req);
    if (prior) return finish(ctx, prior.job, opts, "resumed", prior.pane);
    // A tree an earlier close of the name left goes first, and one an attempt
    // taken back (just now, or by the rules) may have made: a new one may take its path.
    sayTrees(io, "spawn", await removeTreesLeft(io, store, sup, req.ws, name));
    const { hello } = await sup.ready(h.reg, ["job", "channel"]);
    sameInstance(opts.host, h.reg.name, h.instance, hello.instance, h.profile !== undefined);
    // The start's JobSpec, key and msgId are fixed first: the record holds them.
    const start = planStart(ctx, req, hello.seams.job ?? declared, hello.instance, plan);
    // 2. The job record.
    const rec = await writeRecord(ctx, req, start, plan);
    // 3. The site.
    const link = await makeSpawnSite(ctx, req, start.key, plan);
    // 4. job.start, journaled.
    const started = await startJob(ctx, req, start, rec, link !== undefined);
    await finish(ctx, started, opts, "spawned");
  });
}

/** 5. The view, and 6. readiness; where a spawn cut short after its start resumes. */
export async function finish(
  ctx: SpawnCtx,
  j: JobRecord,
  opts: Pick<SpawnOptions, "send" | "task">,
  verb: "spawned" | "resumed",
  pane: string | null = null,
): Promise<void> {
  const s = await startedJob(ctx, j);
  // A view already open (a spawn cut short after it) must live through the
  // window from now on.
  const view = pane ? { pane, openedAt: ctx.io.ports.clock.now() } : await openView(ctx, s);
  await awaitReady(ctx, s, view, opts, verb);
}

import { crashPoint } from "../../crash-point.js";
import { RefusedError } from "../../errors.js";
import { attachView, openPane } from "../../jobs/job-calls.js";
import { agentOf, jobByKey, putAgent } from "../../jobs/records.js";
import type { ViewCommand } from "../../view/mux.js";
import type { SpawnCtx } from "./context.js";
import type { Started } from "./started.js";

// Step 5 of a spawn: a pane running the start's view command (stdin from
// /dev/null), then the agent's row naming it.

export interface OpenedView {
  pane: string;
  /** When the pane opened: the readiness window counts from here. */
  openedAt: number;
}

export async function openView(ctx: SpawnCtx, s: Started): Promise<OpenedView> {
  const { io, store, sup, h, mux } = ctx;
  const { j, target } = s;
  const ws = j.workstream;
  const name = j.agent;
  let view: ViewCommand;
  try {
    view = (j.view as ViewCommand | null) ?? (await attachView(io, sup, h, j, target));
  } catch (err) {
    return s.fail(null, `no view to open (${(err as Error).message})`);
  }
  // A pane left by a mu that died between opening it and recording it would
  // run on unseen: no view of this agent is live here, so any pane is such.
  for (const orphan of await mux.panesOf(ws, name)) await mux.kill(orphan);
  let pane: string;
  const openedAt = io.ports.clock.now();
  try {
    pane = (await openPane(mux, ws, name, view, "spawn again")).id;
  } catch (err) {
    return s.fail(null, (err as Error).message);
  }
  await crashPoint("view.pane-opened", io.ports);
  const closed = await store.write((db) => {
    // Another mu may have closed the agent while this one opened its view:
    // a job that is gone is not brought back as a live agent, or the host
    // and plugin would stay held by an agent no verb can find.
    if (!jobByKey(db, j.key)) return true;
    const a = agentOf(db, ws, name);
    putAgent(db, {
      workstream: ws,
      name,
      incarnation: s.incarnation,
      jobKey: j.key,
      host: j.host,
      channelPlugin: h.reg.name,
      channel: s.channel,
      pane,
      state: "live",
      channelInc: j.firstInc ?? a?.channelInc ?? null,
      waitAfter: a?.waitAfter ?? (j.firstMsgId !== null ? 0 : null),
      createdAt: a?.createdAt ?? io.ports.clock.now(),
    });
    return false;
  });
  if (closed) {
    await mux.kill(pane);
    throw new RefusedError(
      "spawn.closed-meanwhile",
      "agent",
      `${ws}/${name} was closed by another mu while this spawn opened its view; the view is closed too`,
      {
        hint: `spawn it again if you still want it: mu agent spawn ${name} --host ${j.host} -w ${ws}`,
      },
    );
  }
  await crashPoint("view.recorded", io.ports);
  return { pane, openedAt };
}

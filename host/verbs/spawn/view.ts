import { crashPoint } from "../../crash-point.js";
import { attachView, openPane } from "../../jobs/job-calls.js";
import { agentOf, putAgent } from "../../jobs/records.js";
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
    pane = (await openPane(mux, ws, name, view)).id;
  } catch (err) {
    return s.fail(null, (err as Error).message);
  }
  await crashPoint("view.pane-opened", io.ports);
  await store.write((db) => {
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
  });
  return { pane, openedAt };
}

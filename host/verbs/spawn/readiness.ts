import { READ_MS } from "../../effects/resolve.js";
import { envMs, MS_VARIABLES } from "../../env-ms.js";
import { MuError } from "../../errors.js";
import { deliver } from "../../jobs/deliver.js";
import { fencedRead } from "../../jobs/job-calls.js";
import { agentOf, jobByKey, putAgent, putJob } from "../../jobs/records.js";
import { livesThroughWindow } from "../../view/mux.js";
import { firstPrompt, type SpawnCtx, type SpawnOptions } from "./context.js";
import type { Started } from "./started.js";
import type { OpenedView } from "./view.js";

// Step 6 of a spawn: readiness. An at-start kind's start carried its
// baseline; any other kind's channel must answer channel.baseline within
// MU_SPAWN_JOB_MS. The view must live through its window, and an on-send
// kind then gets its first prompt as a journaled channel.send.

export const DEFAULT_SPAWN_JOB_MS = MS_VARIABLES.MU_SPAWN_JOB_MS.fallback;

function spawnJobMs(env: Readonly<Record<string, string | undefined>>): number {
  return envMs(env, "MU_SPAWN_JOB_MS");
}

export async function awaitReady(
  ctx: SpawnCtx,
  s: Started,
  v: OpenedView,
  opts: Pick<SpawnOptions, "send" | "task">,
  verb: "spawned" | "resumed",
): Promise<void> {
  const { io, store, mux } = ctx;
  const { j } = s;
  const { pane } = v;
  // A resumed spawn still owes its first prompt unless one was delivered
  // (or journaled) to this job already; and then the wait counts from that
  // delivery's baseline, which the channel's baseline now must not move.
  const delivered = await store.read(
    (db) =>
      // One the channel definitely did not take (not-accepted) is no delivery.
      db.exec(
        "SELECT 1 FROM receipts WHERE workstream = ? AND agent = ? AND created_at >= ? AND state <> 'not-accepted'",
        [j.workstream, j.agent, j.createdAt],
      ).length > 0,
  );
  if (j.firstMsgId === null) await awaitBaseline(ctx, s, pane, delivered);
  // Counted from the pane's opening: readiness above may have used it up.
  if (!(await livesThroughWindow(mux, io.ports, pane, v.openedAt)))
    return s.fail(pane, `its view (pane ${pane}) died after it was opened`);
  io.out(`${verb} ${j.workstream}/${j.agent} on ${j.host} (job ${j.key}, view ${pane})\n`);
  const text = firstPrompt(opts);
  if (j.firstMsgId === null && text !== undefined && !delivered) await firstSend(ctx, s, text);
  // The spawn is done: a later spawn of the name is refused, not resumed.
  await store.write((db) => {
    const now = jobByKey(db, j.key);
    if (now?.writer) putJob(db, { ...now, writer: null });
  });
}

const NO_ANSWER_YET = "no answer yet";

/** Polls the channel's baseline until it answers or MU_SPAWN_JOB_MS runs out. */
async function awaitBaseline(
  ctx: SpawnCtx,
  s: Started,
  pane: string,
  delivered: boolean,
): Promise<void> {
  const { io, store, sup, h } = ctx;
  const { j, target } = s;
  const waitMs = spawnJobMs(io.ports.env);
  const deadline = io.ports.clock.now() + waitMs;
  let last = NO_ANSWER_YET;
  for (;;) {
    const left = deadline - io.ports.clock.now();
    if (left <= 0)
      return s.fail(pane, `its channel gave no baseline within ${waitMs} ms (${last})`);
    // An attempt the window cuts short can only time out for want of time;
    // that says nothing about the channel, whose last real answer is the reason.
    const cut = left < READ_MS;
    try {
      const baseline = (
        await fencedRead(io, sup, h, j, "channel.baseline", { target }, Math.min(READ_MS, left))
      ).result;
      if (baseline !== null) {
        const b = baseline as { runs: number; incarnation?: number };
        await store.write((db) => {
          const a = agentOf(db, j.workstream, j.agent);
          if (a?.jobKey !== j.key) return;
          if (delivered) putAgent(db, { ...a, channelInc: a.channelInc ?? b.incarnation ?? null });
          else putAgent(db, { ...a, waitAfter: b.runs, channelInc: b.incarnation ?? a.channelInc });
        });
        return;
      }
      last = "the channel answered null";
    } catch (err) {
      const outOfTime =
        cut &&
        err instanceof MuError &&
        err.code === "call.no-answer" &&
        io.ports.clock.now() >= deadline;
      if (!outOfTime || last === NO_ANSWER_YET) last = (err as Error).message;
    }
    await io.ports.clock.sleep(Math.min(100, Math.max(0, deadline - io.ports.clock.now())));
  }
}

/** An on-send kind's first prompt: a delivery, journaled like any other. */
async function firstSend(ctx: SpawnCtx, s: Started, text: string): Promise<void> {
  const { j } = s;
  const { msgId, result } = await deliver({ ...ctx, j, target: s.target }, s.channel, {
    method: "channel.send",
    params: { text, mode: "followUp", force: false, firstPrompt: true },
    withMsgId: true,
  });
  ctx.io.out(`sent ${msgId} to ${j.workstream}/${j.agent} (baseline ${result?.baseline ?? "?"})\n`);
}

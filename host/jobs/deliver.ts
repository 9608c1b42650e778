import { EFFECT_MS } from "../effects/resolve.js";
import { runEffect } from "../effects/run-effect.js";
import type { Ports } from "../ports/types.js";
import { planted, TESTBED_BUILD } from "../testbed-plant.js";
import { deliveryReplyProblem, incarnationAfter } from "./delivery-reply.js";
import { fencedRead, type JobCall } from "./job-calls.js";
import { jobStillToStop } from "./job-guard.js";
import { agentOf, agentSubject, putAgent, putReceipt } from "./records.js";

// One delivery to an agent, journaled like any effect: its receipt is
// `sending` in the intent's own commit, `accepted` with the answer (and the
// reply's baseline becomes what the agent's next wait counts from),
// `not-accepted` when the plugin definitely did nothing. A reply is checked
// against the request: the seam's channel name, the msgId it was sent.

export interface Delivery {
  method: string;
  /** Beyond target and msgId. */
  params: Record<string, unknown>;
  /** Whether the method carries a msgId (abort and answer do not). */
  withMsgId: boolean;
}

export interface Delivered {
  msgId: string;
  result: Record<string, unknown> | null;
}

export function newMsgId(ports: Ports): string {
  return `msg-${ports.random.hex(8)}`;
}

export async function deliver(
  call: JobCall,
  channel: string,
  d: Delivery,
  msgId = newMsgId(call.io.ports),
): Promise<Delivered> {
  const { io, store, sup, h, j, target } = call;
  const at = io.ports.clock.now();
  const ws = j.workstream;
  const name = j.agent;
  const receipt = (state: string) => ({ msgId, workstream: ws, agent: name, state, createdAt: at });
  const result = (await runEffect(
    { ports: io.ports, store, sup, reg: h.reg, instance: j.instance },
    {
      subject: agentSubject(ws, name),
      method: d.method,
      key: msgId,
      params: { target, ...d.params, ...(d.withMsgId ? { msgId } : {}) },
      timeoutMs: EFFECT_MS,
      // In the intent's commit: the job may have been closed since the read,
      // or another mu's stop of it be on its way, which would end the turn
      // this delivery starts: a message said sent would be lost with it.
      before: (db) => {
        jobStillToStop(db, j);
        putReceipt(db, receipt("sending"));
      },
      check: (res) =>
        deliveryReplyProblem(
          d.method,
          (res ?? {}) as Record<string, unknown>,
          d.withMsgId ? msgId : undefined,
          channel,
          d.params.expectIncarnation,
        ),
      done: (db, res) => {
        putReceipt(db, receipt("accepted"));
        const r = res as { baseline?: number; runs?: number; incarnation?: number } | null;
        const after = d.method === "channel.interrupt" ? r?.runs : r?.baseline;
        const a = agentOf(db, ws, name);
        if (a) {
          putAgent(db, {
            ...a,
            waitAfter: after ?? a.waitAfter,
            channelInc:
              TESTBED_BUILD && planted(io.ports.env, "fresh-keeps-incarnation")
                ? (r?.incarnation ?? a.channelInc)
                : incarnationAfter(d.method, r?.incarnation, a.channelInc),
          });
        }
      },
      failed: (db) => putReceipt(db, receipt("not-accepted")),
    },
    d.withMsgId ? `mu agent check ${name} ${msgId} -w ${ws}` : `mu agent read ${name} -w ${ws}`,
  )) as Record<string, unknown> | null;
  return { msgId, result };
}

/**
 * After a fresh whose reply named no incarnation: a reading of the channel's
 * baseline says which, so later deliveries can expect it again.
 */
export async function learnIncarnation(call: JobCall): Promise<void> {
  const { io, store, sup, h, j, target } = call;
  const b = (await fencedRead(io, sup, h, j, "channel.baseline", { target })).result as {
    incarnation?: number;
  } | null;
  if (typeof b?.incarnation !== "number") return;
  const inc = b.incarnation;
  await store.write((db) => {
    const a = agentOf(db, j.workstream, j.agent);
    if (a && a.channelInc === null) putAgent(db, { ...a, channelInc: inc });
  });
}

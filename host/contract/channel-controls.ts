import { ErrorReply } from "../plugin/call-errors.js";
import { canonical } from "../plugin/load-rules.js";
import type { InitializeResult } from "../protocol/declaration.js";
import {
  type Agent,
  deliver,
  newMsgId,
  onAgent,
  runsNow,
  send,
  sendParams,
  stillRuns,
  untilRuns,
} from "./channel-kit.js";
import { EFFECT_MS } from "./job-seam.js";
import type { RunContext, Session } from "./session.js";
import { CheckFailed, describeCall, failedCall, must, type Outcome } from "./verdict.js";

// The deliveries beyond a plain send, each only where the caps promise it:
// fresh, command, interrupt, abort, answer; and a send into an incarnation
// the channel is not in is refused with nothing applied, which is all that
// keeps a delivery meant for an old conversation out of a new one.

const STOP_MS = 10_000;
/** How long a refused delivery is given to show a turn it should not have started. */
const QUIET_MS = 1000;

async function incarnation(a: Agent): Promise<number> {
  const b = await runsNow(a);
  if (b.incarnation !== undefined) return b.incarnation;
  const r = (await must(
    "channel.readStates",
    a.s.call("channel.readStates", { target: a.j.target, targets: [a.ref] }),
  )) as Record<string, { incarnation?: number }>;
  const inc = r[a.ref]?.incarnation;
  if (inc === undefined)
    throw new CheckFailed("neither channel.baseline nor channel.readStates named the incarnation", [
      canonical(r),
    ]);
  return inc;
}

/** fresh in-place: a delivery reply, then its turn settles. */
async function fresh(a: Agent): Promise<void> {
  const d = await deliver(a, "channel.fresh", {
    target: a.j.target,
    text: "mu plugin check: a new conversation; reply with one word",
    msgId: newMsgId(),
    force: false,
  });
  // A fresh conversation is a delivery: a send after it is not the agent's first prompt.
  a.first = false;
  await untilRuns(a, (d.baseline ?? 0) + 1, "channel.fresh's turn");
}

/** A send with a stale expectIncarnation must be refused, and nothing delivered. */
async function stale(a: Agent, inc: number): Promise<void> {
  const before = (await runsNow(a)).runs;
  const first = a.first;
  const p = sendParams(a, newMsgId(), { expectIncarnation: inc });
  // A refused send delivered nothing: the agent's first prompt is still to come.
  a.first = first;
  let took: unknown;
  try {
    took = await a.s.call("channel.send", p, EFFECT_MS);
  } catch (err) {
    const what = `channel.send with expectIncarnation ${inc}, not the agent's incarnation`;
    if (!(err instanceof ErrorReply))
      throw new CheckFailed(failedCall(what, err), [describeCall(err)]);
    if (err.kind === "unknown-outcome")
      throw new CheckFailed(`${what} answered unknown-outcome, not a refusal`, [describeCall(err)]);
  }
  if (took !== undefined)
    throw new CheckFailed(
      `channel.send with expectIncarnation ${inc}, not the agent's incarnation, was answered, not refused`,
      [canonical(took)],
    );
  await stillRuns(
    a,
    before,
    QUIET_MS,
    `a send refused for expectIncarnation ${inc} started a turn`,
  );
}

async function interrupt(a: Agent): Promise<void> {
  await send(a);
  const before = (await runsNow(a)).runs;
  const msgId = newMsgId();
  const r = (await must(
    "channel.interrupt",
    a.s.call(
      "channel.interrupt",
      {
        target: a.j.target,
        text: "mu plugin check: stop; reply with one word",
        msgId,
        timeoutMs: STOP_MS,
      },
      EFFECT_MS,
    ),
  )) as { msgId?: string };
  if (r.msgId !== undefined && r.msgId !== msgId)
    throw new CheckFailed(`channel.interrupt answered msgId ${r.msgId}, not ${msgId}`, [
      canonical(r),
    ]);
  await untilRuns(a, before + 1, "the interrupt's turn");
}

async function abort(a: Agent): Promise<void> {
  await send(a);
  await must(
    "channel.abort",
    a.s.call("channel.abort", { target: a.j.target, timeoutMs: STOP_MS }, STOP_MS + EFFECT_MS),
  );
}

async function command(a: Agent): Promise<void> {
  await deliver(a, "channel.command", { target: a.j.target, name: "help", force: false });
}

async function answer(a: Agent): Promise<void> {
  const keys = ["Escape"];
  const r = (await must(
    "channel.answer",
    a.s.call("channel.answer", { target: a.j.target, keys, force: true }, EFFECT_MS),
  )) as { keys: string[] };
  if (canonical(r.keys) !== canonical(keys))
    throw new CheckFailed(
      `channel.answer answered keys ${canonical(r.keys)}, not the keys pressed`,
      [canonical(r)],
    );
}

export async function channelControls(
  ctx: RunContext,
  s: Session,
  hello: InitializeResult,
  params: Record<string, string>,
): Promise<Outcome> {
  return onAgent(ctx, s, hello, params, async (a) => {
    const caps = a.channel.caps as Record<string, unknown>;
    const did: string[] = [];
    const inc0 = await incarnation(a);
    if (caps.fresh === "in-place") {
      await fresh(a);
      did.push("fresh");
    }
    const inc1 = await incarnation(a);
    // After a fresh that moved on, the old incarnation is truly stale.
    const bad = inc1 !== inc0 ? inc0 : inc1 + 1;
    await stale(a, bad);
    did.push(`a send with expectIncarnation ${bad} refused, nothing delivered`);
    if (caps.command === true) {
      await command(a);
      did.push("command");
    }
    if (caps.interrupt !== "none") {
      await interrupt(a);
      await abort(a);
      did.push("interrupt", "abort");
    }
    if (caps.answer === true) {
      await answer(a);
      did.push("answer");
    }
    const off = [
      caps.fresh !== "in-place" && "fresh",
      caps.command !== true && "command",
      caps.interrupt === "none" && "interrupt and abort",
      caps.answer !== true && "answer",
    ].filter(Boolean);
    return `${did.join("; ")}${off.length ? `; not declared: ${off.join(", ")}` : ""}`;
  });
}

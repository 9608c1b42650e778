import { canonical } from "../plugin/load-rules.js";
import type { InitializeResult } from "../protocol/declaration.js";
import { newMsgId, onAgent } from "./channel-kit.js";
import type { RunContext, Session } from "./session.js";
import { CheckFailed, must, type Outcome, skip } from "./verdict.js";

// An exact receipt is mu's proof of a delivery whose reply was lost: an
// accepted for a msgId the agent never took makes mu record a message as
// delivered that never was. A msgId never sent must read not-accepted.

export async function channelReceipts(
  ctx: RunContext,
  s: Session,
  hello: InitializeResult,
  params: Record<string, string>,
): Promise<Outcome> {
  return onAgent(ctx, s, hello, params, async (a) => {
    const msgId = newMsgId();
    const r = (await must(
      "channel.receipt",
      s.call("channel.receipt", { target: a.j.target, msgId }),
    )) as { state: string; id: string };
    if (r.state !== "not-accepted" || r.id !== msgId)
      throw new CheckFailed(
        `channel.receipt of msgId ${msgId}, never sent, answered ${r.state} for ${r.id}, not not-accepted for it`,
        [canonical(r)],
      );
    return `a receipt for msgId ${msgId}, never sent, answered not-accepted`;
  });
}

export const receiptSkip = (hello: InitializeResult): Outcome | undefined =>
  hello.seams.channel?.caps.receipt === "exact"
    ? undefined
    : skip("the channel declares receipt: none, so mu never asks for a receipt");

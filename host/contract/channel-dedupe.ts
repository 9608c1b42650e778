import { canonical } from "../plugin/load-rules.js";
import type { InitializeResult } from "../protocol/declaration.js";
import { deliver, onAgent, runsNow, sendParams, stillRuns, untilRuns } from "./channel-kit.js";
import type { RunContext, Session } from "./session.js";
import { CheckFailed, type Outcome, skip } from "./verdict.js";

// Exact dedupe of deliveries: a send repeated with the same msgId and the
// same params, at once and again after its turn settled, answers the first
// reply and starts no second turn. mu resends a delivery whose reply it lost
// only because the channel promises this.

/** How long past the settle a second turn is looked for: the turn's own time and half a second more. */
const marginFor = (turnMs: number) => turnMs + 500;

export async function channelDedupe(
  ctx: RunContext,
  s: Session,
  hello: InitializeResult,
  params: Record<string, string>,
): Promise<Outcome> {
  return onAgent(ctx, s, hello, params, async (a) => {
    const before = (await runsNow(a)).runs;
    const p = sendParams(a);
    const t0 = s.now();
    const first = await deliver(a, "channel.send", p);
    const same = async (when: string) => {
      const again = await deliver(a, "channel.send", p, "a resent channel.send");
      if (canonical(again) !== canonical(first))
        throw new CheckFailed(
          `a resend of msgId ${p.msgId} ${when} did not answer the first reply`,
          [`first: ${canonical(first)}`, `resend: ${canonical(again)}`],
        );
    };
    await same("right after it");
    const settled = await untilRuns(a, before + 1, "the send's turn");
    const turnMs = s.now() - t0;
    await same("after its turn settled");
    const margin = marginFor(turnMs);
    await stillRuns(
      a,
      settled,
      margin,
      `msgId ${p.msgId} was sent three times with identical params and a second turn ran`,
    );
    return `msgId ${p.msgId} sent three times (twice again, at once and after its turn): the first reply each time, one turn (runs ${before} to ${settled}, none more in ${margin} ms)`;
  });
}

export const dedupeSkip = (hello: InitializeResult): Outcome | undefined =>
  hello.seams.channel?.caps.dedupe === "exact"
    ? undefined
    : skip("the channel declares dedupe: none, so mu never resends a delivery");

// What a delivery's reply means. Kept apart from deliver.ts because the
// replay rules (job-rules.ts) read it, and deliver.ts already depends on
// them through job-calls.ts.

/**
 * The channel's incarnation once a delivery was accepted. A fresh starts a
 * new one: unless its reply names it, the old one is forgotten (null: the
 * next delivery expects none) rather than kept and refused.
 */
export function incarnationAfter(
  method: string,
  replied: number | undefined,
  before: number | null,
): number | null {
  if (replied !== undefined) return replied;
  return method === "channel.fresh" ? null : before;
}

/**
 * Why a delivery's reply does not answer its request: the channel's name, the
 * msgId sent, the incarnation it was sent to.
 */
export function deliveryReplyProblem(
  method: string,
  r: Record<string, unknown>,
  msgId: string | undefined,
  channel: string,
  expectInc?: unknown,
): string | undefined {
  if (
    ["channel.send", "channel.fresh", "channel.command"].includes(method) &&
    r.channel !== channel
  ) {
    return `the reply names channel '${String(r.channel)}', not '${channel}'`;
  }
  if (msgId !== undefined && r.msgId !== undefined && r.msgId !== msgId) {
    return `the reply names msgId ${String(r.msgId)}, not ${msgId}`;
  }
  return incarnationProblem(r.incarnation, expectInc);
}

// Only an interrupt's reply names an incarnation (the schema allows it on no
// other delivery), and it must be the one the interrupt was sent to.
function incarnationProblem(inc: unknown, expect: unknown): string | undefined {
  if (typeof inc === "number" && typeof expect === "number" && inc !== expect)
    return `the reply names incarnation ${inc}, but it was sent to ${expect}`;
  return undefined;
}

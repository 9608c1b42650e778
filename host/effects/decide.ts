import type { KeyCaps } from "../protocol/declaration.js";
import { EFFECT_SPAN_MS } from "./timeouts.js";

// The resolver's decisions as pure functions of what it knows. Each returns
// the rule-table row it followed; the impure half (host/effects/resolve.ts)
// asks the plugin what a row says to ask, and records what a row says to
// record. Table-driven tests cover every row.

export interface Facts {
  /** The instance the plugin answers under now. */
  instance: string;
  writerAlive: boolean;
  resolverAlive: boolean;
  /** The plugin process group the writer called has no live process left. */
  groupEmpty: boolean;
  now: number;
}

export interface PendingIntent {
  method: string;
  instance: string;
  writtenAt: number;
}

/** The deliveries: channel effects, resolved by receipt or by a deduped resend. */
export const DELIVERIES: readonly string[] = [
  "channel.send",
  "channel.fresh",
  "channel.command",
  "channel.interrupt",
  "channel.abort",
  "channel.answer",
];

/** What a delivery can be resolved by: the channel's caps, and what was written since. */
export interface DeliveryFacts {
  receiptExact: boolean;
  dedupeExact: boolean;
  /** The delivery names a msgId a receipt can be asked about. */
  hasMsgId: boolean;
  /** The intent's params hold the message's text, so it can be sent again. */
  hasText: boolean;
  /** A newer delivery to the same agent was written after this one. */
  newerWritten: boolean;
  /** The job the delivery was for no longer runs (stopped, closed, rolled back). */
  jobEnded: boolean;
}

export type First =
  | { row: GuardRow | "fence.instance"; ask: "nothing" }
  | { row: "stop.reissue" | "release.reissue"; ask: "resend" }
  | { row: "keyed"; ask: "lookup"; fence: boolean }
  | { row: `${"start" | "acquire"}.dedupe.inside`; ask: "resend" }
  | { row: `${"start" | "acquire"}.dedupe.expired`; ask: "nothing" }
  | { row: "delivery.receipt"; ask: "receipt" }
  | { row: "delivery.resend"; ask: "resend" }
  | { row: "delivery.superseded" | "delivery.no-msgid" | "delivery.job-ended"; ask: "nothing" }
  | { row: "unresolvable"; ask: "nothing" };

export type GuardRow = "guard.writer-alive" | "guard.resolver-alive";

/**
 * The guards every row starts with: an intent another live mu holds (its
 * writer, or a resolver that claimed it) is that mu's to settle. The resolver
 * asks this before it starts the plugin (the writer) and again as it claims
 * the intent (a resolver), so these two lines are the ones that refuse.
 */
export function decideGuard(f: Pick<Facts, "writerAlive" | "resolverAlive">): GuardRow | undefined {
  if (f.writerAlive) return "guard.writer-alive";
  if (f.resolverAlive) return "guard.resolver-alive";
  return undefined;
}

const prefix = (method: string) => (method === "job.start" ? "start" : "acquire");

export function decideFirst(
  intent: PendingIntent,
  caps: KeyCaps | undefined,
  f: Facts,
  delivery?: DeliveryFacts,
): First {
  const guard = decideGuard(f);
  if (guard) return { row: guard, ask: "nothing" };
  if (f.instance !== intent.instance) return { row: "fence.instance", ask: "nothing" };
  if (intent.method === "job.stop") return { row: "stop.reissue", ask: "resend" };
  if (intent.method === "host.release") return { row: "release.reissue", ask: "resend" };
  if (DELIVERIES.includes(intent.method) && delivery) {
    // Its job is gone: nothing can take it any more, whatever a receipt said.
    if (delivery.jobEnded) return { row: "delivery.job-ended", ask: "nothing" };
    // A command, an abort or an answer names nothing a dedupe could know it
    // by, and two identical ones are two: a resend would apply it again.
    if (!delivery.hasMsgId) return { row: "delivery.no-msgid", ask: "nothing" };
    if (delivery.receiptExact) return { row: "delivery.receipt", ask: "receipt" };
    // A resend after a newer delivery could land out of order: leave it.
    if (delivery.newerWritten) return { row: "delivery.superseded", ask: "nothing" };
    if (delivery.dedupeExact) return { row: "delivery.resend", ask: "resend" };
    return { row: "unresolvable", ask: "nothing" };
  }
  if ((intent.method === "host.acquire" || intent.method === "job.start") && caps) {
    if (caps.lookup) return { row: "keyed", ask: "lookup", fence: caps.fenceKey };
    const p = prefix(intent.method);
    if (caps.dedupe?.exact) {
      // Inside means the resend lands inside too: the window is counted from
      // the intent's writing, which is before the first send arrived, and
      // must outlast the resend's whole span, deadline and grace.
      return f.now - intent.writtenAt + EFFECT_SPAN_MS < caps.dedupe.windowMs
        ? { row: `${p}.dedupe.inside`, ask: "resend" }
        : { row: `${p}.dedupe.expired`, ask: "nothing" };
    }
  }
  return { row: "unresolvable", ask: "nothing" };
}

export type LookupAnswer =
  | { found: unknown }
  | { pending: true }
  | { none: true }
  | { unknown: string };

export interface LookupFacts extends Facts {
  fenced: boolean;
  inFlightMs: number | undefined;
  /** A file-handle job kind never acts on none. */
  fileHandle: boolean;
}

export type LookupRow =
  `${"start" | "acquire"}.lookup.${"found" | "pending" | "unknown" | "none.proven" | "none.unproven" | "none.file"}`;

export function decideLookup(
  method: string,
  answer: LookupAnswer,
  intent: PendingIntent,
  f: LookupFacts,
): LookupRow {
  const p = prefix(method);
  if ("found" in answer) return `${p}.lookup.found`;
  if ("pending" in answer) return `${p}.lookup.pending`;
  if ("unknown" in answer) return `${p}.lookup.unknown`;
  if (p === "start" && f.fileHandle) return "start.lookup.none.file";
  const waited = f.inFlightMs !== undefined && f.now - intent.writtenAt >= f.inFlightMs;
  const proven = !f.writerAlive && f.groupEmpty && (f.fenced || waited);
  return proven ? `${p}.lookup.none.proven` : `${p}.lookup.none.unproven`;
}

/**
 * A none that no later lookup can turn into a proven none: the writer and
 * the group it called are gone, and the fence, the in-flight bound or the
 * lack of any bound leaves nothing to wait for. A file-handle kind never acts
 * on it, and a kind with neither a fence nor a bound can never prove it: no
 * rule resolves such a start, only a person can end it.
 */
export function noneForGood(answer: LookupAnswer, intent: PendingIntent, f: LookupFacts): boolean {
  if (!("none" in answer)) return false;
  const waited = f.inFlightMs === undefined || f.now - intent.writtenAt >= f.inFlightMs;
  // A file kind's job may be running already and write its handle late: the
  // fence keeps a new start out, not that one, so only its bound counts.
  const bounded = f.fileHandle ? waited : f.fenced || waited;
  return !f.writerAlive && f.groupEmpty && bounded;
}

/** Rows after which a start or an acquire stays pending for good: nothing is left to ask. */
export const STUCK_FOR_GOOD: readonly string[] = [
  "start.dedupe.expired",
  "acquire.dedupe.expired",
  "unresolvable",
];

export interface ReceiptAnswer {
  state: "accepted" | "not-accepted" | "unreachable";
  id: string;
}

export type ReceiptRow =
  | "delivery.receipt.accepted"
  | "delivery.receipt.not-accepted.resend"
  | "delivery.receipt.not-accepted.settled"
  | "delivery.receipt.other";

/**
 * What an exact receipt's answer leaves. Only an accepted one that echoes
 * the asked msgId is a success. A not-accepted one that echoes it proves the
 * channel never took the message: with exact dedupe, and no newer delivery it
 * could overtake, the identical params go again (a copy still on its way is
 * the same msgId, so the channel applies one); else, once the plugin process
 * that got the request is gone and nothing can still carry it there, it is
 * settled as not delivered, its text kept for the user to send again.
 */
export function decideReceipt(
  answer: ReceiptAnswer,
  msgId: string,
  d?: Pick<DeliveryFacts, "dedupeExact" | "newerWritten" | "hasText">,
  groupEmpty = false,
): ReceiptRow {
  if (answer.id !== msgId) return "delivery.receipt.other";
  if (answer.state === "accepted") return "delivery.receipt.accepted";
  if (answer.state !== "not-accepted" || !d) return "delivery.receipt.other";
  if (d.dedupeExact && !d.newerWritten && d.hasText) return "delivery.receipt.not-accepted.resend";
  return groupEmpty ? "delivery.receipt.not-accepted.settled" : "delivery.receipt.other";
}

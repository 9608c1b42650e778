import type { KeyCaps } from "../protocol/declaration.js";

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

export type First =
  | { row: "guard.writer-alive" | "guard.resolver-alive" | "fence.instance"; ask: "nothing" }
  | { row: "stop.reissue" | "release.reissue"; ask: "resend" }
  | { row: "keyed"; ask: "lookup"; fence: boolean }
  | { row: `${"start" | "acquire"}.dedupe.inside`; ask: "resend" }
  | { row: `${"start" | "acquire"}.dedupe.expired`; ask: "nothing" }
  | { row: "unresolvable"; ask: "nothing" };

const prefix = (method: string) => (method === "job.start" ? "start" : "acquire");

export function decideFirst(intent: PendingIntent, caps: KeyCaps | undefined, f: Facts): First {
  if (f.writerAlive) return { row: "guard.writer-alive", ask: "nothing" };
  if (f.resolverAlive) return { row: "guard.resolver-alive", ask: "nothing" };
  if (f.instance !== intent.instance) return { row: "fence.instance", ask: "nothing" };
  if (intent.method === "job.stop") return { row: "stop.reissue", ask: "resend" };
  if (intent.method === "host.release") return { row: "release.reissue", ask: "resend" };
  if ((intent.method === "host.acquire" || intent.method === "job.start") && caps) {
    if (caps.lookup) return { row: "keyed", ask: "lookup", fence: caps.fenceKey };
    const p = prefix(intent.method);
    if (caps.dedupe?.exact) {
      return f.now - intent.writtenAt < caps.dedupe.windowMs
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

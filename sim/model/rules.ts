// The replay rule table for a start or an acquire whose outcome mu does not
// know, as the protocol's "Effects and replay" section gives it, and what
// that means for `forget`: a person may end such an intent only when no row
// of the table can settle it any more.

/** A key capability as a plugin declares it, with the protocol's defaults filled in. */
export interface KeyCaps {
  lookup: boolean;
  fenceKey: boolean;
  /** null: the plugin names no bound, so time alone never proves a none. */
  inFlightMs: number | null;
  dedupe?: { exact: boolean; windowMs: number };
  /** A `handle: "file"` job kind: mu never acts on its lookup's none. */
  fileHandle?: boolean;
}

/** What a lookup may answer about a key. */
export type Lookup = "found" | "none";

/** The row a resolver lands on, once the writer and the process it called are gone. */
export type Row = "settled" | "unsettled";

/**
 * The row that applies once the writer is gone. With a lookup, `found`
 * always settles; a `none` settles only when a fence or a passed in-flight
 * bound proves it, and never for a file-handle kind. Without a lookup, an
 * exact dedupe inside its window resends and so settles; anything else is
 * left for a person.
 */
export function row(caps: KeyCaps, answer: Lookup, elapsedMs: number): Row {
  if (caps.lookup) {
    if (answer === "found") return "settled";
    if (caps.fileHandle) return "unsettled";
    if (caps.fenceKey) return "settled";
    return caps.inFlightMs !== null && elapsedMs >= caps.inFlightMs ? "settled" : "unsettled";
  }
  if (caps.dedupe?.exact && elapsedMs < caps.dedupe.windowMs) return "settled";
  return "unsettled";
}

/**
 * Whether `forget` may end the intent, over an elapsed time known only
 * between two bounds and a lookup whose answer the model does not know:
 * "never" when every case settles (so forget must refuse), else "maybe".
 */
export function forgettable(caps: KeyCaps, minMs: number, maxMs: number): "never" | "maybe" {
  const rows = (["found", "none"] as const).flatMap((a) => [
    row(caps, a, minMs),
    row(caps, a, maxMs),
  ]);
  return rows.includes("unsettled") ? "maybe" : "never";
}

/** What the testbed's plugin declares when a world leaves the key seams as they are. */
const DEFAULT: KeyCaps = { lookup: true, fenceKey: true, inFlightMs: 30_000 };

/** A declaration's key capabilities (`seams.host.acquire` or `seams.job.start`). */
export function keyCaps(declared: unknown, fileHandle = false): KeyCaps {
  const d = (declared ?? {}) as Partial<KeyCaps>;
  return { ...DEFAULT, ...d, ...(fileHandle ? { fileHandle } : {}) };
}

/** Whether no row can settle the intent at any elapsed time between the bounds, whatever a lookup says. */
export function stuckThroughout(caps: KeyCaps, minMs: number, maxMs: number): boolean {
  return (["found", "none"] as const).every(
    (a) => row(caps, a, minMs) === "unsettled" && row(caps, a, maxMs) === "unsettled",
  );
}

// Strict decoding of what a plugin writes. Anything that is not exactly a
// reply, an error reply or one of the two watch notifications is an invalid
// message: there is no lenient mode.

export type ErrorKind = "retryable" | "permanent" | "human" | "unknown-outcome";
const KINDS = new Set<string>(["retryable", "permanent", "human", "unknown-outcome"]);
export const NOTIFICATIONS = new Set(["watch/settled", "watch/restarted"]);

export interface WireError {
  code: number;
  message: string;
  kind: ErrorKind;
  remedy?: string;
}

export type Incoming =
  | { type: "reply"; id: number; result: unknown }
  | { type: "error"; id: number; error: WireError }
  | { type: "notification"; method: string; params: Record<string, unknown> }
  | { type: "invalid"; why: string };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

function unknownKey(o: Record<string, unknown>, allowed: readonly string[]): string | undefined {
  return Object.keys(o).find((k) => !allowed.includes(k));
}

export const NOT_JSON = "not JSON";

/** How much of a line that is not JSON a refusal quotes. */
const QUOTE_CHARS = 80;

/**
 * "not JSON", quoting the line: most often it is a log line printed on the
 * wrong stream, and the author recognises it at once. The cut ends in the
 * same mark the plugin check's canary mask looks for ("… ("), so a secret
 * that runs across it is still masked there.
 */
export function notJson(line: string): string {
  const shown =
    line.length > QUOTE_CHARS ? `${line.slice(0, QUOTE_CHARS)}… (${line.length} chars)` : line;
  return `${NOT_JSON}: ${JSON.stringify(shown)}`;
}

function invalid(why: string): Incoming {
  return { type: "invalid", why };
}

export function decodeIncoming(line: string): Incoming {
  // JSON text carries no byte-order mark (RFC 8259, 8.1), and one is invisible when quoted.
  if (line.startsWith("\uFEFF"))
    return invalid("the line starts with a byte-order mark (U+FEFF); write UTF-8 without one");
  let msg: unknown;
  try {
    msg = JSON.parse(line);
  } catch {
    return invalid(NOT_JSON);
  }
  if (!isObject(msg)) return invalid("not a JSON object");
  if (msg.jsonrpc !== "2.0") return invalid('jsonrpc is not "2.0"');
  if ("method" in msg) {
    if ("id" in msg) return invalid(`a request to mu (${String(msg.method)}); plugins send none`);
    const extra = unknownKey(msg, ["jsonrpc", "method", "params"]);
    if (extra) return invalid(`unknown field '${extra}'`);
    if (typeof msg.method !== "string" || !NOTIFICATIONS.has(msg.method)) {
      return invalid(
        `notification '${String(msg.method)}' is not watch/settled or watch/restarted`,
      );
    }
    if (!isObject(msg.params)) return invalid(`${msg.method} without params`);
    return { type: "notification", method: msg.method, params: msg.params };
  }
  if (typeof msg.id !== "number" || !Number.isSafeInteger(msg.id)) {
    return invalid("a reply without an integer id");
  }
  if ("error" in msg) {
    const extra = unknownKey(msg, ["jsonrpc", "id", "error"]);
    if (extra) return invalid(`unknown field '${extra}'`);
    const e = msg.error;
    if (!isObject(e)) return invalid("error is not an object");
    const extraE = unknownKey(e, ["code", "message", "data"]);
    if (extraE) return invalid(`unknown field 'error.${extraE}'`);
    if (typeof e.code !== "number" || !Number.isInteger(e.code))
      return invalid("error.code is not an integer");
    if (typeof e.message !== "string") return invalid("error.message is not a string");
    if (!isObject(e.data)) return invalid("error without data.kind");
    const extraD = unknownKey(e.data, ["kind", "remedy"]);
    if (extraD) return invalid(`unknown field 'error.data.${extraD}'`);
    const kind = e.data.kind;
    if (typeof kind !== "string" || !KINDS.has(kind))
      return invalid(`error.data.kind '${String(kind)}' is unknown`);
    const remedy = e.data.remedy;
    if (remedy !== undefined && typeof remedy !== "string")
      return invalid("error.data.remedy is not a string");
    if (kind === "human" && typeof remedy !== "string")
      return invalid("a human error without data.remedy");
    const error: WireError = { code: e.code, message: e.message, kind: kind as ErrorKind };
    if (remedy !== undefined) error.remedy = remedy;
    return { type: "error", id: msg.id, error };
  }
  const extra = unknownKey(msg, ["jsonrpc", "id", "result"]);
  if (extra) return invalid(`unknown field '${extra}'`);
  // A reply always carries result; nothing is a null, never an absent key.
  if (!("result" in msg)) return invalid("a reply without result");
  return { type: "reply", id: msg.id, result: msg.result };
}

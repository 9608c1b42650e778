import { NoAnswer } from "./call-errors.js";
import { MAX_LINE_BYTES } from "./framing.js";

// A request must fit the transport's line limit once JSON-encoded, and JSON
// can grow a string up to six times (a control character becomes \u00XX),
// so a script within maxScriptBytes can still be too long. The size counts
// the widest id and deadline a send can carry: a request that passes before
// its intent is written passes on every later send too.

const WIDEST = Number.MAX_SAFE_INTEGER;

/** The request's bytes when it is over the line limit, else undefined. */
export function oversize(
  method: string,
  params: Record<string, unknown>,
  bare = false,
): number | undefined {
  const message = {
    jsonrpc: "2.0",
    id: WIDEST,
    method,
    params: bare ? params : { ...params, deadline: WIDEST },
  };
  const bytes = Buffer.byteLength(JSON.stringify(message), "utf8");
  return bytes > MAX_LINE_BYTES ? bytes : undefined;
}

/** Throws the definite refusal (nothing sent) for a request over the limit. */
export function checkRequestSize(
  method: string,
  params: Record<string, unknown>,
  bare = false,
): void {
  const bytes = oversize(method, params, bare);
  if (bytes === undefined) return;
  throw new NoAnswer(
    method,
    "oversize",
    `its request would be ${bytes} bytes once encoded, over the ${MAX_LINE_BYTES}-byte line limit`,
  );
}

import { describe, expect, it } from "vitest";
import { NoAnswer } from "../host/plugin/call-errors.js";
import { MAX_LINE_BYTES } from "../host/plugin/framing.js";
import { checkRequestSize, oversize } from "../host/plugin/request-size.js";

// The size pre-check counts what every send of the request will carry: the
// widest id and the deadline mu adds. A request that fits only without the
// deadline must be refused before anything is written (an intent included).

/** A script that makes the request exactly `total` bytes without its deadline. */
function scriptFor(total: number): Record<string, unknown> {
  const bare = (n: number) => ({ script: "x".repeat(n) });
  const base = Buffer.byteLength(
    JSON.stringify({
      jsonrpc: "2.0",
      id: Number.MAX_SAFE_INTEGER,
      method: "link.exec",
      params: bare(0),
    }),
  );
  return bare(total - base);
}

describe("the request size pre-check", () => {
  it("refuses a request that fits the line only without the deadline a send adds", () => {
    const params = scriptFor(MAX_LINE_BYTES - 10);
    expect(oversize("link.exec", params, true)).toBeUndefined();
    expect(oversize("link.exec", params)).toBeGreaterThan(MAX_LINE_BYTES);
    expect(() => checkRequestSize("link.exec", params)).toThrow(NoAnswer);
  });

  it("lets through one that fits with the widest deadline", () => {
    const deadline = `,"deadline":${Number.MAX_SAFE_INTEGER}`.length;
    const params = scriptFor(MAX_LINE_BYTES - deadline);
    expect(oversize("link.exec", params)).toBeUndefined();
    expect(oversize("link.exec", scriptFor(MAX_LINE_BYTES - deadline + 1))).toBe(
      MAX_LINE_BYTES + 1,
    );
  });
});

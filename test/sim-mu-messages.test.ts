import { describe, expect, it } from "vitest";
import { MuMessages } from "../sim/plugin/mu-messages.js";

// The sim's strict reading of what mu writes: each slip a plugin author
// would trip over is named, and mu's ordinary exchange passes.

const NOW = 1_700_000_000_000;
const target = { host: { name: "h1" } };
const exec = (id: number, deadline = NOW + 25_000) => ({
  jsonrpc: "2.0",
  id,
  method: "link.exec",
  params: { target, deadline, script: "true", cwd: ".", timeoutMs: 20_000 },
});
const hello = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocol: { min: 1, max: 1 }, mu: "5" },
};
const cancel = (params: Record<string, unknown>) => ({
  jsonrpc: "2.0",
  method: "$/cancel",
  params,
});
const shutdown = { jsonrpc: "2.0", method: "shutdown", params: {} };

describe("the sim's reading of mu's messages", () => {
  it("passes a handshake, a call, its cancel and shutdown", () => {
    const m = new MuMessages(() => NOW);
    expect([hello, exec(2), cancel({ id: 2 }), shutdown].map((x) => m.slip(x))).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("takes the testbed's pause as mu's, checking only its id", () => {
    const m = new MuMessages(() => NOW);
    const pause = (id: number) => ({
      jsonrpc: "2.0",
      id,
      method: "testbed.pause",
      params: { point: "forget.committed", deadline: NOW + 90_000 },
    });
    expect([hello, pause(2), pause(2)].map((x) => m.slip(x))).toEqual([
      undefined,
      undefined,
      "id 2 used for a second request",
    ]);
    // A notification of that name is still one mu never sends.
    expect(m.slip({ jsonrpc: "2.0", method: "testbed.pause", params: {} })).toMatch(/never sends/);
  });

  it("names each slip", () => {
    const m = new MuMessages(() => NOW);
    expect(m.slip({ ...hello, jsonrpc: "" })).toMatch(/^not a JSON-RPC 2\.0 message: /);
    expect(m.slip(hello)).toBeUndefined();
    expect(m.slip(exec(1))).toBe("id 1 used for a second request");
    expect(m.slip(exec(-1))).toMatch(/^not a JSON-RPC 2\.0 message: \/id: must be >= 0/);
    expect(m.slip(exec(3, NOW - 20_000))).toBe("link.exec arrived 20000 ms after its deadline");
    expect(m.slip(exec(4, NOW - 500))).toBeUndefined();
    expect(m.slip(cancel({}))).toMatch(/^\$\/cancel params: /);
    expect(m.slip(cancel({ id: 9 }))).toBe("a $/cancel for id 9, which mu never sent");
    expect(m.slip({ jsonrpc: "2.0", method: "watch/settled", params: {} })).toBe(
      "a notification mu never sends: 'watch/settled'",
    );
    expect(m.slip(shutdown)).toBeUndefined();
    expect(m.slip(cancel({ id: 4 }))).toBe("a message after shutdown");
  });
});

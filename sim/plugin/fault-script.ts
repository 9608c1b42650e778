import type { Action, Fault, InvalidKind } from "./fault-types.js";
import type { World } from "./world.js";

// The world's fault script, shared by the simulated plugin and the proxy in
// front of a real one: each call is counted, and the faults that fire on
// it are returned in script order (a once fault is marked fired).

/** True when every dotted path in `want` holds the same JSON value in `params`. */
export function matches(params: Record<string, unknown>, want: Record<string, unknown>): boolean {
  return Object.entries(want).every(([path, v]) => {
    let at: unknown = params;
    for (const k of path.split(".")) at = (at as Record<string, unknown> | undefined)?.[k];
    return JSON.stringify(at) === JSON.stringify(v);
  });
}

export function firedFaults(
  world: World,
  method: string,
  params: Record<string, unknown>,
): Action[] {
  const faults: Fault[] = world.config().faults ?? [];
  const fired: Action[] = [];
  world.update((s) => {
    const n = (s.calls[method] ?? 0) + 1;
    s.calls[method] = n;
    faults.forEach((f, i) => {
      if (f.on !== method && f.on !== "*") return;
      if (f.call !== undefined && f.call !== n) return;
      if (f.match && !matches(params, f.match)) return;
      if ((f.times ?? "once") === "once") {
        const id = `${i}:${JSON.stringify(f)}`;
        if (s.fired.includes(id)) return;
        s.fired.push(id);
      }
      fired.push(f.do);
    });
  });
  return fired;
}

/**
 * The msgId of a delivery whose patched reply contradicts its request (another
 * msgId, another incarnation than the one it was sent to), which mu must
 * never count as taken; undefined when the reply still fits.
 */
export function contradicted(params: Record<string, unknown>, reply: unknown): string | undefined {
  const r = (reply ?? {}) as Record<string, unknown>;
  const msgId = params.msgId;
  if (typeof msgId !== "string") return undefined;
  if (r.msgId !== undefined && r.msgId !== msgId) return msgId;
  const expect = params.expectIncarnation;
  if (typeof expect === "number" && r.incarnation !== undefined && r.incarnation !== expect)
    return msgId;
  return undefined;
}

/** The line an invalid fault writes in place of the answer to request `id`. */
export function invalidLine(kind: InvalidKind, id: number, raw = ""): string | Buffer {
  switch (kind) {
    case "raw":
      return `${raw.replaceAll("{id}", String(id))}\n`;
    case "not-json":
      return "this is not json\n";
    case "unknown-field":
      return `${JSON.stringify({ jsonrpc: "2.0", id, result: null, surprise: true })}\n`;
    case "bad-utf8":
      // Valid JSON but for one byte, so only the UTF-8 check can catch it.
      return Buffer.concat([
        Buffer.from(`{"jsonrpc":"2.0","id":${id},"result":{"note":"`),
        Buffer.from([0xff]),
        Buffer.from('"}}\n'),
      ]);
    case "oversize":
      return `${JSON.stringify({ jsonrpc: "2.0", id, result: "x".repeat(1024 * 1024 + 16) })}\n`;
    case "reply-to-none":
      return `${JSON.stringify({ jsonrpc: "2.0", id: id + 1000, result: null })}\n`;
    case "request-to-mu":
      return `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "mu.ask", params: {} })}\n`;
    case "watch-unknown": {
      // In the schema's shape, so only the "no such watch" rule can catch it.
      const observation = { status: "idle", settled: true, since: 0, runs: 1, incarnation: 1 };
      const params = { watchId: "w-never-opened", observation };
      return `${JSON.stringify({ jsonrpc: "2.0", method: "watch/settled", params })}\n`;
    }
    case "watch-malformed": {
      const observation = { status: "idle", settled: true, since: 0, incarnation: 1 };
      const params = { watchId: "w-never-opened", observation };
      return `${JSON.stringify({ jsonrpc: "2.0", method: "watch/settled", params })}\n`;
    }
    case "unterminated":
      // A whole answer but for its newline: only the end of the stream can tell.
      return JSON.stringify({ jsonrpc: "2.0", id, result: null });
  }
}

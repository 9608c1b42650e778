import { describe, expect, it } from "vitest";
import { ErrorReply, NoAnswer } from "../host/plugin/call-errors.js";
import { Connection, type StopCause } from "../host/plugin/connection.js";
import { realClock } from "../host/ports/real.js";
import { protocolChecks } from "../host/protocol/checks.js";

// The connection alone, over an in-memory wire: no processes.

function wire() {
  const sent: Record<string, unknown>[] = [];
  const stops: [StopCause, string][] = [];
  const conn = new Connection({
    write: (b) => {
      for (const line of Buffer.from(b).toString().split("\n").filter(Boolean))
        sent.push(JSON.parse(line));
      return true;
    },
    clock: realClock,
    ...protocolChecks(),
    onStop: (cause, detail) => stops.push([cause, detail]),
  });
  const reply = (m: unknown) => conn.feed(Buffer.from(`${JSON.stringify(m)}\n`));
  return { conn, sent, stops, reply };
}

const target = { target: { host: { name: "h" } } };
const watchParams = { ...target, afterRuns: 0 };
const observation = { status: "idle", settled: true, since: 1, runs: 1, incarnation: 1 };

describe("Connection", () => {
  it("on stdout's EOF asks for the stop and leaves the calls to it, so each gets its $/cancel", async () => {
    const { conn, sent, stops } = wire();
    let settled = false;
    const call = conn.request("job.status", target, { timeoutMs: 60_000 }).finally(() => {
      settled = true;
    });
    conn.end();
    expect(stops.map(([cause]) => cause)).toEqual(["exited"]);
    await Promise.resolve();
    expect(settled).toBe(false);
    conn.beginStop("exited");
    expect(sent.slice(1)).toEqual([
      { jsonrpc: "2.0", method: "$/cancel", params: { id: 1 } },
      { jsonrpc: "2.0", method: "shutdown", params: {} },
    ]);
    const err = await call.catch((e: unknown) => e);
    expect([(err as NoAnswer).reason, (err as NoAnswer).written]).toEqual(["exited", true]);
  });

  it("refuses a request over the line limit unsent, where JSON escaping is what overflows", async () => {
    const { conn, sent, stops } = wire();
    // 200,000 quotes fit any maxScriptBytes of 1 MiB, but encode to 400,000
    // bytes; control characters to six bytes each.
    const script = `${'"'.repeat(200_000)}${"\u0001".repeat(120_000)}`;
    const err = await conn
      .request("link.exec", { ...target, script, cwd: ".", timeoutMs: 1 }, { timeoutMs: 1000 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoAnswer);
    expect([(err as NoAnswer).reason, (err as NoAnswer).written]).toEqual(["oversize", false]);
    expect(sent).toEqual([]);
    // Nothing reached the plugin, so it is not stopped and the next call goes.
    expect(stops).toEqual([]);
    const ok = conn.request("job.status", target, { timeoutMs: 1000 });
    expect(sent).toHaveLength(1);
    conn.beginStop();
    await ok.catch(() => {});
  });

  it("stamps every request but the handshake with a deadline, and numbers ids", async () => {
    const { conn, sent, reply } = wire();
    const a = conn.request(
      "initialize",
      { protocol: { min: 1, max: 1 }, mu: "0" },
      { timeoutMs: 1000, bare: true },
    );
    const b = conn.request("job.status", target, { timeoutMs: 1000 });
    expect(sent[0]).toEqual({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocol: { min: 1, max: 1 }, mu: "0" },
    });
    expect(sent[1]).toMatchObject({ id: 2, params: { ...target, deadline: expect.any(Number) } });
    reply({ jsonrpc: "2.0", id: 2, result: { state: "running" } });
    reply({
      jsonrpc: "2.0",
      id: 1,
      error: { code: 1, message: "no", data: { kind: "permanent" } },
    });
    await expect(b).resolves.toEqual({ state: "running" });
    await expect(a).rejects.toBeInstanceOf(ErrorReply);
  });

  it("delivers a watch's one notification, even one that arrives with the reply", async () => {
    const { conn, reply } = wire();
    const p = conn.request("channel.watch", watchParams, { timeoutMs: 1000 });
    reply({ jsonrpc: "2.0", id: 1, result: { watchId: "w1", initial: observation } });
    reply({ jsonrpc: "2.0", method: "watch/settled", params: { watchId: "w1", observation } });
    await p;
    const got = await new Promise((r) =>
      conn.onWatch("w1", (method, params) => r([method, params])),
    );
    expect(got).toEqual(["watch/settled", { watchId: "w1", observation }]);
    expect(conn.state).toBe("open");
  });

  it("ignores a notification that crosses mu's cancel of the watch", async () => {
    const { conn, sent, reply, stops } = wire();
    const p = conn.request("channel.watch", watchParams, { timeoutMs: 1000 });
    reply({ jsonrpc: "2.0", id: 1, result: { watchId: "w1", initial: observation } });
    await p;
    conn.cancelWatch("w1");
    expect(sent.at(-1)).toEqual({ jsonrpc: "2.0", method: "$/cancel", params: { watchId: "w1" } });
    reply({ jsonrpc: "2.0", method: "watch/restarted", params: { watchId: "w1", incarnation: 2 } });
    expect(conn.state).toBe("open");
    expect(stops).toEqual([]);
  });

  it("breaks on a notification for no open watch, or a second one", async () => {
    const a = wire();
    a.reply({ jsonrpc: "2.0", method: "watch/settled", params: { watchId: "nope", observation } });
    expect(a.conn.state).toBe("broken");
    expect(a.stops[0]?.[0]).toBe("invalid");

    const b = wire();
    const p = b.conn.request("channel.watch", watchParams, { timeoutMs: 1000 });
    b.reply({ jsonrpc: "2.0", id: 1, result: { watchId: "w", initial: observation } });
    await p;
    b.conn.onWatch("w", () => {});
    b.reply({ jsonrpc: "2.0", method: "watch/settled", params: { watchId: "w", observation } });
    expect(b.conn.state).toBe("open");
    b.reply({ jsonrpc: "2.0", method: "watch/settled", params: { watchId: "w", observation } });
    expect(b.conn.state).toBe("broken");
  });

  it("treats a schema-breaking result as an invalid message", async () => {
    const { conn, reply, stops } = wire();
    const p = conn.request("job.status", target, { timeoutMs: 1000 });
    reply({ jsonrpc: "2.0", id: 1, result: { state: "running", extra: true } });
    expect(conn.state).toBe("broken");
    expect(stops[0]?.[1]).toMatch(/job\.status result: \/: unknown field 'extra'/);
    conn.beginStop();
    await expect(p).rejects.toBeInstanceOf(NoAnswer);
  });

  it("refuses new requests once broken, without writing them", async () => {
    const { conn, sent, reply } = wire();
    reply({ jsonrpc: "2.0", id: 5, result: null });
    const n = sent.length;
    const err = await conn
      .request("job.status", target, { timeoutMs: 1000 })
      .catch((e: unknown) => e);
    expect((err as NoAnswer).reason).toBe("refused");
    expect((err as NoAnswer).written).toBe(false);
    expect(sent.length).toBe(n);
  });

  it("the stop sequence cancels each pending call, then shuts down, once", async () => {
    const { conn, sent } = wire();
    const a = conn.request("job.status", target, { timeoutMs: 10_000 }).catch((e: unknown) => e);
    const b = conn.request("job.attach", target, { timeoutMs: 10_000 }).catch((e: unknown) => e);
    conn.beginStop();
    conn.beginStop();
    expect(sent.slice(2)).toEqual([
      { jsonrpc: "2.0", method: "$/cancel", params: { id: 1 } },
      { jsonrpc: "2.0", method: "$/cancel", params: { id: 2 } },
      { jsonrpc: "2.0", method: "shutdown", params: {} },
    ]);
    expect(((await a) as NoAnswer).reason).toBe("stopped");
    expect(((await b) as NoAnswer).written).toBe(true);
  });

  it("a late reply to a call given up at its deadline is ignored, not invalid", async () => {
    const { conn, sent, reply, stops } = wire();
    const err = await conn
      .request("job.status", target, { timeoutMs: 20 })
      .catch((e: unknown) => e);
    expect((err as NoAnswer).reason).toBe("deadline");
    expect(sent[1]).toEqual({ jsonrpc: "2.0", method: "$/cancel", params: { id: 1 } });
    reply({ jsonrpc: "2.0", id: 1, result: { state: "running" } });
    expect(conn.state).toBe("open");
    expect(stops.map((s) => s[0])).toEqual(["deadline"]);
  });
});

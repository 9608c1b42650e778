import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { methodDefs, validate } from "../host/protocol/schema.js";
import { World, type WorldConfig } from "../sim/plugin/world.js";

// mu-plugin-sim's job and channel seams, spoken to over its real stdio: every
// reply and notification must be valid against the published schema, and the
// world's agents must progress as the testbed promises (turns settle, runs
// are dense, a repeated msgId is one delivery).

const sim = join(packageRoot(), "sim/bin/mu-plugin-sim");

class Wire {
  private buf = "";
  private id = 0;
  private waiting = new Map<number, (m: Record<string, unknown>) => void>();
  readonly notes: Record<string, unknown>[] = [];
  constructor(readonly child: ChildProcessWithoutNullStreams) {
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (c: string) => {
      this.buf += c;
      for (let nl = this.buf.indexOf("\n"); nl !== -1; nl = this.buf.indexOf("\n")) {
        const m = JSON.parse(this.buf.slice(0, nl)) as Record<string, unknown>;
        this.buf = this.buf.slice(nl + 1);
        if (typeof m.id === "number") this.waiting.get(m.id)?.(m);
        else this.notes.push(m);
      }
    });
  }
  async call(method: string, params: Record<string, unknown>): Promise<unknown> {
    const id = ++this.id;
    const full = { ...params, deadline: Date.now() + 10_000 };
    const p = new Promise<Record<string, unknown>>((r) => this.waiting.set(id, r));
    this.child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id, method, params: full })}\n`);
    const m = await p;
    if (m.error) throw new Error(JSON.stringify(m.error));
    const def = methodDefs(method);
    if (def?.result) expect(validate(def.result, m.result).ok, `${method} result`).toBe(true);
    return m.result;
  }
}

describe("mu-plugin-sim: jobs and channels", () => {
  let dir: string;
  let child: ChildProcessWithoutNullStreams;
  let wire: Wire;
  const start = (config: WorldConfig) => {
    World.create(join(dir, "world"), config);
    child = spawn(sim, ["--world", join(dir, "world")], { stdio: "pipe" });
    wire = new Wire(child);
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "mu-sim-world-"));
  });
  afterEach(() => {
    child?.kill("SIGKILL");
    rmSync(dir, { recursive: true, force: true });
  });

  const spec = {
    workstream: "ws",
    name: "a",
    harness: "claude",
    role: "full-access",
    cmd: "claude",
    commandSource: "harness",
    cwd: ".",
    env: {},
  };
  const target = (key: string) => ({
    host: { name: "box", instance: "sim-1" },
    job: { kind: "sim", key },
    agent: { workstream: "ws", name: "a", incarnation: 1 },
  });

  it("starts, reads, delivers, watches and stops, all schema-valid", async () => {
    start({ preset: "provider-full", instance: "sim-1", turnMs: 100 });
    await wire.call("initialize", { protocol: { min: 1, max: 1 }, mu: "test" });
    const t = target("k1");
    const started = (await wire.call("job.start", { target: t, key: "k1", spec })) as {
      view: { command: string };
    };
    expect(started.view.command).toContain("sleep");
    expect(await wire.call("job.status", { target: t })).toEqual({ state: "running" });
    expect(await wire.call("channel.baseline", { target: t })).toEqual({ runs: 0, incarnation: 1 });
    const send = {
      target: t,
      text: "hi",
      msgId: "m1",
      mode: "followUp",
      force: false,
      firstPrompt: true,
    };
    expect(await wire.call("channel.send", send)).toMatchObject({ baseline: 0, msgId: "m1" });
    // The same msgId again is the same delivery: no second turn.
    expect(await wire.call("channel.send", send)).toMatchObject({ baseline: 0 });
    const w = (await wire.call("channel.watch", { target: t, afterRuns: 0 })) as {
      watchId: string;
    };
    for (let i = 0; i < 100 && wire.notes.length === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    const note = wire.notes[0] as {
      method: string;
      params: { watchId: string; observation: { runs: number } };
    };
    expect(note.method).toBe("watch/settled");
    expect(validate("notification.watch.settled.params", note.params).ok).toBe(true);
    expect(note.params.watchId).toBe(w.watchId);
    expect(note.params.observation.runs).toBe(1);
    expect(await wire.call("channel.receipt", { target: t, msgId: "m1" })).toMatchObject({
      state: "accepted",
      id: "m1",
      runs: 0,
    });
    expect(await wire.call("channel.receipt", { target: t, msgId: "nope" })).toEqual({
      state: "not-accepted",
      id: "nope",
    });
    expect(await wire.call("channel.readStates", { target: t, targets: ["ws/a"] })).toMatchObject({
      "ws/a": { state: "idle", runs: 1 },
    });
    expect(await wire.call("job.lookup", { target: t, key: "k1", fence: true })).toMatchObject({
      found: { handle: expect.any(String) },
    });
    expect(await wire.call("job.lookup", { target: t, key: "other", fence: true })).toEqual({
      none: true,
    });
    expect(await wire.call("job.stop", { target: t, key: "k1" })).toBeNull();
    expect(await wire.call("job.stop", { target: t, key: "k1" })).toBeNull();
    expect(await wire.call("job.status", { target: t })).toEqual({ state: "ended", exit: 0 });
    const s = new World(join(dir, "world")).state();
    expect(s.effects).toMatchObject({ "job.start:k1": 1, "channel.send:m1": 1, "job.stop:k1": 1 });
  });

  it("an at-start kind takes its first prompt with the start and answers baseline runs 0", async () => {
    start({ preset: "reply-at-start", instance: "sim-1", turnMs: 50 });
    await wire.call("initialize", { protocol: { min: 1, max: 1 }, mu: "test" });
    const t = target("k2");
    const r = (await wire.call("job.start", {
      target: t,
      key: "k2",
      spec: { ...spec, firstPrompt: { text: "go", msgId: "first" } },
    })) as { handle: string; baseline: { runs: number } };
    expect(r.handle).toMatch(/^sim-job-k2/);
    expect(r.baseline.runs).toBe(0);
    const found = (await wire.call("job.lookup", { target: t, key: "k2", fence: false })) as {
      found: { handle: string; baseline: unknown; view: unknown };
    };
    expect(found.found).toMatchObject({ handle: r.handle, baseline: { runs: 0 } });
    expect(await wire.call("channel.receipt", { target: t, msgId: "first" })).toMatchObject({
      state: "accepted",
    });
  });
});

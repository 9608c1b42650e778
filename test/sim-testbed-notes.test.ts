import { createFsFromVolume, Volume } from "memfs";
import { describe, expect, it } from "vitest";
import { SimPlugin } from "../sim/plugin/serve.js";
import type { SimIo } from "../sim/plugin/sim-io.js";
import { World, type WorldFs } from "../sim/plugin/world.js";

// What the sim records so the explorer can see mu break a rule. A machine
// remembers the instance it was made under, and a call about it in a session
// whose handshake named another instance is noted: without the note the
// explorer could not see mu cross the fence. A channel that declares dedupe
// none delivers a repeated msgId again and counts it: without that, a resend
// mu must never make would be invisible.

const io: SimIo = {
  pid: 4242,
  out: () => {},
  err: () => {},
  exit: () => {},
  killParent: () => {},
  ignoreTermination: () => {},
  env: {},
  setTimer: () => ({ cancel: () => {} }),
  alive: () => false,
  startHelper: () => 0,
  closeOut: () => {},
};

async function session(world: World) {
  const sim = new SimPlugin(world, io);
  let id = 1;
  const call = (method: string, params: Record<string, unknown> = {}) =>
    sim.handle({ jsonrpc: "2.0", id: id++, method, params });
  await call("initialize", { protocol: 1 });
  return call;
}

const crossings = (world: World) =>
  world
    .transcript()
    .filter((l) => l.dir === "note" && "otherInstance" in l.msg)
    .map((l) => l.msg.otherInstance);

describe("the sim's fence watch", () => {
  const make = () =>
    World.create(
      "/w",
      { preset: "provider-full", instance: "sim-1" },
      createFsFromVolume(new Volume()) as unknown as WorldFs,
    );

  it("notes a release sent to another instance than the machine was made under", async () => {
    const world = make();
    await (await session(world))("host.acquire", { key: "k1", spec: {} });
    world.setConfig({ ...world.config(), instance: "sim-2" });
    await (await session(world))("host.release", { key: "k1" });
    expect(crossings(world)).toEqual([{ method: "host.release", made: "sim-1", spoken: "sim-2" }]);
  });

  it("notes nothing while the instance stays the same", async () => {
    const world = make();
    await (await session(world))("host.acquire", { key: "k1", spec: {} });
    const call = await session(world);
    await call("host.status", { target: { host: { name: "h1", handle: "sim-k1-1" } } });
    await call("host.release", { key: "k1" });
    expect(crossings(world)).toEqual([]);
  });
});

describe("the sim's channel", () => {
  const withDedupe = (dedupe: "exact" | "none") => {
    const world = World.create(
      "/w",
      {
        preset: "link-job",
        instance: "sim-1",
        hello: { seams: { channel: { caps: { receipt: "none", dedupe } } } },
      },
      createFsFromVolume(new Volume()) as unknown as WorldFs,
    );
    return world;
  };
  const target = {
    host: { name: "box" },
    agent: { workstream: "main", name: "a", incarnation: 1 },
  };

  it.each([
    ["exact", 1],
    ["none", 2],
  ] as const)("with dedupe %s, delivers one msgId sent twice %i time(s)", async (dedupe, n) => {
    const world = withDedupe(dedupe);
    const call = await session(world);
    await call("job.start", { key: "j1", target, spec: { workstream: "main", name: "a" } });
    for (let i = 0; i < 2; i++)
      await call("channel.send", { target, msgId: "msg-1", text: "hi", mode: "queue" });
    expect(world.state().effects["channel.send:msg-1"]).toBe(n);
  });
});

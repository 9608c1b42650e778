import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { firedFaults } from "../sim/plugin/fault-script.js";
import { World } from "../sim/plugin/world.js";

// The world's fault script as scenarios and the explorer write it: each world
// step replaces the faults, and a once fault fires once.

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const world = () => {
  dir = mkdtempSync(join(tmpdir(), "mu-faults-"));
  return World.create(dir, { preset: "provider-full", instance: "sim-1" });
};
const step = (w: World, faults: NonNullable<ReturnType<World["config"]>["faults"]>) =>
  w.setConfig({ ...w.config(), faults });

describe("the fault script", () => {
  it("fires a once fault once", () => {
    const w = world();
    step(w, [{ on: "host.acquire", do: { hang: true } }]);
    expect(firedFaults(w, "host.acquire", {})).toEqual([{ hang: true }]);
    expect(firedFaults(w, "host.acquire", {})).toEqual([]);
  });

  // The explorer replaces its one fault at every fault step: before this,
  // the first once fault to fire left every later one at its place unfired,
  // so most runs met one fault however many they drew.
  it("arms a new fault put where a fired one was", () => {
    const w = world();
    step(w, [{ on: "initialize", do: { crash: "before" } }]);
    expect(firedFaults(w, "initialize", {})).toHaveLength(1);
    step(w, [{ on: "host.acquire", do: { hang: true } }]);
    expect(firedFaults(w, "host.acquire", {})).toEqual([{ hang: true }]);
    step(w, [{ on: "host.acquire", do: { crash: "after" } }]);
    expect(firedFaults(w, "host.acquire", {})).toEqual([{ crash: "after" }]);
  });

  it("leaves a fired fault fired when a step states it again", () => {
    const w = world();
    const f = { on: "job.stop", do: { hang: true as const } };
    step(w, [f]);
    expect(firedFaults(w, "job.stop", {})).toHaveLength(1);
    step(w, [f]);
    expect(firedFaults(w, "job.stop", {})).toEqual([]);
  });

  it("fires an always fault on every call", () => {
    const w = world();
    step(w, [{ on: "*", times: "always", do: { delayMs: 5 } }]);
    expect(firedFaults(w, "host.status", {})).toHaveLength(1);
    expect(firedFaults(w, "job.status", {})).toHaveLength(1);
  });
});

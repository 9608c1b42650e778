import { spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { HostProfile } from "../host/hosts/profiles.js";
import { machineBound, withSlot } from "../host/hosts/slots.js";
import { realPorts } from "../host/ports/real.js";
import { muError, tempState } from "./helpers.js";

// The slot bound of a `slots: "mu"` link, against real lock files: the
// scenario link/slots-bound proves it across real mu processes; these pin
// the edges a scenario cannot reach cheaply.

describe("host slots", () => {
  let st: ReturnType<typeof tempState>;
  beforeEach(() => {
    st = tempState();
  });
  afterEach(() => st.done());

  const bound = { host: "box", maxSessions: 1, slots: "mu" as const };

  it("waits for a held slot and takes it once freed", async () => {
    const ports = realPorts(st.env);
    const order: string[] = [];
    let waited = 0;
    let freeFirst: () => void = () => {};
    const first = withSlot(
      ports,
      bound,
      () => {},
      async () => {
        order.push("first in");
        await new Promise<void>((r) => {
          freeFirst = r;
        });
        order.push("first out");
      },
    );
    await new Promise((r) => setTimeout(r, 50));
    const second = withSlot(
      ports,
      bound,
      () => waited++,
      async () => {
        order.push("second in");
      },
    );
    await new Promise((r) => setTimeout(r, 200));
    expect(order).toEqual(["first in"]);
    freeFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(["first in", "first out", "second in"]);
    expect(waited).toBe(1);
  });

  it("gives up with exit 5 after MU_SLOT_WAIT_MS, naming the host", async () => {
    const ports = realPorts({ ...st.env, MU_SLOT_WAIT_MS: "100" });
    let release: () => void = () => {};
    const holder = withSlot(
      ports,
      bound,
      () => {},
      () =>
        new Promise<void>((r) => {
          release = r;
        }),
    );
    await new Promise((r) => setTimeout(r, 50));
    const err = await muError(
      withSlot(
        ports,
        bound,
        () => {},
        async () => {},
      ),
    );
    expect(err.exit).toBe(5);
    expect(err.line()).toMatch(/all 1 sessions of host 'box' stayed in use/);
    release();
    await holder;
  });

  it("takes a slot whose holder died", async () => {
    // A real process that has exited: its pid and start time name no one now.
    const dead = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"], {
      encoding: "utf8",
    });
    const dir = join(st.dir, "slots");
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, "box.0.lock"),
      JSON.stringify({ pid: Number(dead.stdout), start: "1", token: "x" }),
    );
    const ports = realPorts({ ...st.env, MU_SLOT_WAIT_MS: "0" });
    let ran = false;
    await withSlot(
      ports,
      bound,
      () => {},
      async () => {
        ran = true;
      },
    );
    expect(ran).toBe(true);
  });

  it("does not bound a link that arbitrates its own slots", async () => {
    const ports = realPorts({ ...st.env, MU_SLOT_WAIT_MS: "0" });
    const self = { ...bound, slots: "self" as const };
    let release: () => void = () => {};
    const holder = withSlot(
      ports,
      self,
      () => {},
      () =>
        new Promise<void>((r) => {
          release = r;
        }),
    );
    let ran = false;
    await withSlot(
      ports,
      self,
      () => {},
      async () => {
        ran = true;
      },
    );
    expect(ran).toBe(true);
    release();
    await holder;
  });

  // Profiles with one identity are one machine (scenario link/slots-per-identity).
  it("bounds a machine by the smallest --max-sessions among its profiles", () => {
    const p = (name: string, instance: string, maxSessions: number | null): HostProfile => ({
      name,
      plugin: "sim",
      fetch: null,
      repo: null,
      maxSessions,
      instance,
      createdAt: 0,
    });
    const all = [p("a", "i1", 3), p("b", "i1", 1), p("c", "i1", null), p("d", "i2", 2)];
    expect(machineBound(all, p("a", "i1", 3))).toBe(1);
    expect(machineBound(all, p("c", "i1", null))).toBe(1);
    expect(machineBound(all, p("d", "i2", 2))).toBe(2);
    expect(machineBound([p("e", "i3", null)], p("e", "i3", null))).toBeNull();
  });
});

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { World } from "../sim/plugin/world.js";
import { muProcess } from "./helpers.js";

// A wait that ends with watch/restarted starts the count again: the next
// wait watches the new incarnation from 0 runs, not from the count the old
// incarnation had reached (spec: The channel, incarnation). The sim answers
// a watch whose count is above the new incarnation's runs by waiting, so
// only what the next watch asks for shows it.

const sim = join(packageRoot(), "sim/bin/mu-plugin-sim");
let root: string;
let world: World;
const ran: { code: number | null; stdout: string; stderr: string }[] = [];
let env: Record<string, string>;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), "mu-wait-restart-"));
  world = World.create(join(root, "world"), {
    preset: "link-job",
    instance: "sim-1",
    turnMs: 0,
    // The channel restarts as the third wait begins to watch.
    faults: [{ on: "channel.watch", call: 3, do: { restartChannel: true } }],
  });
  env = { MU_STATE_DIR: join(root, "state"), HOME: root, MU_MUX: "sim" };
  for (const args of [
    ["plugin", "add", "sim", "--", sim, "--world", world.dir],
    ["host", "add", "box", "--plugin", "sim"],
    ["agent", "spawn", "a", "--host", "box", "--send", "first"],
    ["wait", "a", "--timeout", "30"],
    ["agent", "send", "a", "second"],
    ["wait", "a", "--timeout", "30"],
    ["wait", "a", "--timeout", "30"],
    ["wait", "a", "--timeout", "1"],
  ])
    ran.push(muProcess(args, env));
}, 120_000);

afterAll(() => {
  // The spawn's view runs in a session of its own, as a pane does: only the
  // close ends it.
  muProcess(["agent", "close", "a"], env);
  rmSync(root, { recursive: true, force: true });
}, 60_000);

describe("the wait after a restart", () => {
  it("watches the new incarnation from 0 runs", () => {
    expect(ran.slice(0, 7).map((r) => r.code)).toEqual([0, 0, 0, 0, 0, 0, 0]);
    expect(ran[5]?.stdout).toMatch(/^main\/a settled runs=2/);
    expect(ran[6]?.stdout).toBe("main/a restarted (incarnation 2)\n");
    const watches = world
      .transcript()
      .filter((m) => m.dir === "in" && m.msg.method === "channel.watch")
      .map((m) => m.msg.params as { afterRuns?: number; inc?: number });
    expect(watches.map((p) => [p.afterRuns, p.inc])).toEqual([
      [0, 1],
      [1, 1],
      [1, 1],
      [0, 2],
    ]);
  });
});

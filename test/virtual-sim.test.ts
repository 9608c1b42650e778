import { createFsFromVolume, Volume } from "memfs";
import { describe, expect, it } from "vitest";
import { runCli } from "../host/cli/run.js";
import { World, type WorldConfig, type WorldFs } from "../sim/plugin/world.js";
import { virtualWorld } from "../sim/virtual/ports.js";
import { virtualSpawner } from "../sim/virtual/spawner.js";

// mu's own verbs, unchanged, on the virtual engine's ports: the sim plugin's
// protocol loop in-process behind a virtual spawner, the store on the
// crash-model disk, time that moves only when the engine lets it. What the
// real engine proves with processes, this runs in milliseconds.

const SIM = "/opt/mu/mu-plugin-sim";

async function engine(config: WorldConfig) {
  const w = virtualWorld();
  const worldFs = createFsFromVolume(new Volume()) as unknown as WorldFs;
  const world = World.create("/world", config, worldFs, () => w.clock.now());
  // The executable mu's trust rules look at: a regular file of ours, not group/world-writable.
  await w.fs.mkdirp("/opt/mu");
  await (await w.fs.open(SIM, { mode: 0o755 })).close();
  const ports = { ...w.ports(), spawner: virtualSpawner(w.processes, w.clock, worldFs) };
  const mu = async (...args: string[]) => {
    let stdout = "";
    let stderr = "";
    const code = await w.clock.run(
      runCli(args, {
        ports,
        out: (s) => {
          stdout += s;
        },
        err: (s) => {
          stderr += s;
        },
      }),
    );
    return { code, stdout, stderr };
  };
  return { w, world, mu };
}

describe("mu on the virtual engine", () => {
  it("registers the in-process sim and acquires, reads and releases a provider host", async () => {
    const { w, world, mu } = await engine({ preset: "provider-full", instance: "sim-1" });
    const add = await mu("plugin", "add", "sim", "--", SIM, "--world", "/world");
    expect(add.stderr).toBe("");
    expect(add.stdout).toMatch(
      /^registered sim 1\.0\.0 \(instance sim-1; seams: link, host, job, channel\)/,
    );
    // Virtual time moves while real work (a module's first import) runs, so
    // it is read from here on, once every verb module has loaded.
    await mu("host", "acquire", "--provider", "sim", "h0");
    await mu("host", "status", "h0");
    await mu("host", "release", "h0");
    const t0 = w.clock.now();
    expect((await mu("host", "acquire", "--provider", "sim", "h1")).code).toBe(0);
    expect((await mu("host", "status", "h1")).stdout).toMatch(/^h1\tready\tsim-h1-[0-9a-f]+-1\t/);
    expect((await mu("host", "release", "h1")).stdout).toBe("released h1\n");
    const applied = Object.entries(world.state().effects).filter(([k]) => k.includes(":h1-"));
    expect(applied.map(([k, n]) => [k.split(":")[0], n]).sort()).toEqual([
      ["host.acquire", 1],
      ["host.release", 1],
    ]);
    // Every plugin exited on its shutdown: no stop waited out its 5 s grace.
    expect(w.clock.now() - t0).toBeLessThan(5_000);
  });
});

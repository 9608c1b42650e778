import { describe, expect, it } from "vitest";
import { virtualWorld } from "../sim/virtual/ports.js";
import { VirtualMu } from "../sim/virtual/process.js";

// A killed virtual mu must behave as a SIGKILLed one: nothing it started
// after the kill happens, what it wrote before stays, and its pid is gone so
// its locks and intents read as a dead writer's.

const settled = async (p: Promise<unknown>, w: ReturnType<typeof virtualWorld>) => {
  let done = false;
  p.then(
    () => {
      done = true;
    },
    () => {
      done = true;
    },
  );
  await w.clock.advance(10_000);
  return done;
};

describe("a virtual mu process", () => {
  it("keeps what it wrote before the kill, and no operation of it returns after", async () => {
    const w = virtualWorld();
    const mu = new VirtualMu(w.processes);
    const ports = mu.ports(w.ports());
    const fh = await ports.fs.open("/kept");
    await fh.write(new TextEncoder().encode("before"));
    await fh.close();
    mu.kill();
    expect(await settled(ports.fs.readFile("/kept"), w)).toBe(false);
    expect(await settled(ports.fs.open("/lost"), w)).toBe(false);
    expect(await settled(ports.clock.sleep(5), w)).toBe(false);
    // Unlike a power cut, the kill loses nothing the kernel already had.
    expect(new TextDecoder().decode(w.fs.peek("/kept") ?? new Uint8Array())).toBe("before");
    expect(w.fs.peek("/lost")).toBeNull();
  });

  it("fires no timer after the kill, and leaves the process table", async () => {
    const w = virtualWorld();
    const mu = new VirtualMu(w.processes);
    const ports = mu.ports(w.ports());
    let fired = 0;
    ports.clock.setTimer(100, () => fired++);
    ports.clock.setTimer(10, () => fired++);
    await w.clock.advance(50);
    expect(fired).toBe(1);
    expect(w.processes.alive(mu.id)).toBe(true);
    mu.kill();
    await w.clock.advance(100);
    expect(fired).toBe(1);
    expect(w.processes.alive(mu.id)).toBe(false);
    expect(ports.liveness.self()).toEqual(mu.id);
  });

  it("a crash point's crash never returns, and the process is dead from that moment", async () => {
    const w = virtualWorld();
    const mu = new VirtualMu(w.processes);
    const ports = mu.ports(w.ports());
    const after = ports.crash().then(() => "returned");
    expect(mu.alive).toBe(false);
    expect(await settled(after, w)).toBe(false);
    await expect(mu.died).resolves.toBeUndefined();
  });
});

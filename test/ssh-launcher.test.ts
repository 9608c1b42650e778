import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exec, sshd, track, useSshd } from "./ssh-kit.js";
import { Wire } from "./ssh-wire.js";
import { alive } from "./sshd.js";

// bin/mu-plugin-ssh starts the ssh master before Node does; the plugin
// adopts it only when it was started with the plugin's own argv, and starts
// its own otherwise. Either way one master serves the calls and none is
// left when the plugin goes.

useSshd();
const scratch = mkdtempSync(join(tmpdir(), "mu-ssh-launcher-"));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The plugin's milestones (plugins/ssh/timing.ts) for one start with these arguments. */
async function milestones(args: string[]): Promise<{ events: string[]; pid: number }> {
  const file = join(scratch, `timing-${Math.random().toString(16).slice(2)}`);
  const w = track(new Wire(args, { ...process.env, MU_SSH_TIMING: file }));
  const pid = w.child.pid ?? 0;
  await w.hello();
  const r = await exec(w, "echo hi");
  expect(r.result).toMatchObject({ exitCode: 0, stdout: "hi\n" });
  expect(await w.close()).toBe(0);
  const events = readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split(" ").slice(2).join(" "));
  return { events, pid };
}

/** What the plugin left: its socket directory, and a live ssh naming it. */
function leftBy(pid: number): string[] {
  const mark = `mu-ssh-${pid}-`;
  const dirs = readdirSync(tmpdir()).filter((d) => d.startsWith(mark));
  const sshs = readdirSync("/proc")
    .filter((d) => /^\d+$/.test(d) && alive(Number(d)))
    .filter((d) => {
      try {
        return readFileSync(`/proc/${d}/cmdline`, "latin1").includes(mark);
      } catch {
        return false;
      }
    });
  return [...dirs, ...sshs.map((d) => `ssh ${d}`)];
}

describe("the launcher's early master", () => {
  it("is adopted when the plugin would have started the same one", async () => {
    const { events, pid } = await milestones([
      "--dest",
      "box",
      "-F",
      sshd.config,
      "--home",
      sshd.home,
    ]);
    expect(events).toContain("master spawned (launcher)");
    expect(events).not.toContain("master spawned");
    expect(events.filter((e) => e === "master up")).toHaveLength(1);
    expect(leftBy(pid)).toEqual([]);
  }, 120_000);

  it("is adopted with -o and -i given in any order", async () => {
    const args = ["--home", sshd.home, "-o", "LogLevel=ERROR", "--dest", "box"];
    const { events } = await milestones([...args, "-i", sshd.key, "-F", sshd.config]);
    expect(events).toContain("master spawned (launcher)");
    expect(events).not.toContain("master spawned");
  }, 120_000);

  it("is not started for argv the launcher does not parse; the plugin starts its own", async () => {
    const { events, pid } = await milestones([
      `--dest=box`,
      `--config=${sshd.config}`,
      "--home",
      sshd.home,
    ]);
    expect(events).not.toContain("master spawned (launcher)");
    expect(events).toContain("master spawned");
    expect(leftBy(pid)).toEqual([]);
  }, 120_000);

  it("that fails leaves the plugin to start its own, which says why", async () => {
    const w = track(new Wire(["--dest", "nohost.invalid", "-F", sshd.config, "--home", sshd.home]));
    const pid = w.child.pid ?? 0;
    await w.hello();
    const r = await exec(w, "true");
    expect(r.error?.data.kind).toBe("permanent");
    expect(r.error?.message).toMatch(/cannot reach nohost\.invalid/);
    expect(await w.close()).toBe(0);
    expect(leftBy(pid)).toEqual([]);
  }, 120_000);
});

import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, expect } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { muBin } from "./helpers.js";
import { sshPluginBin, Wire } from "./ssh-wire.js";
import { type Sshd, type SshdOptions, startSshd } from "./sshd.js";

// What the ssh plugin's test files share: each file starts its own sshd on
// 127.0.0.1 (test/sshd.ts) with useSshd(). These tests need sshd and ssh:
// without them they fail, they do not skip.

export let sshd: Sshd;
const wires: Wire[] = [];

export function useSshd(opts: SshdOptions = {}): void {
  beforeAll(async () => {
    sshd = await startSshd(opts);
  }, 120_000);

  afterAll(async () => {
    for (const w of wires) w.kill();
    const left = sshd ? sshd.killRemote() : [];
    await sshd?.done();
    expect(left, "remote processes the tests left running").toEqual([]);
  }, 120_000);
}

export function track(w: Wire): Wire {
  wires.push(w);
  return w;
}

/** The plugin's arguments that reach this file's sshd. */
function connectArgs(): string[] {
  return ["--dest", "box", "-F", sshd.config, "--home", sshd.home];
}

export function plugin(extra: string[] = []): Wire {
  return track(new Wire([...connectArgs(), ...extra]));
}

/** The argv `mu plugin add ssh --` registers: the plugin reaching this sshd, and `extra`. */
export function pluginArgv(extra: string[] = []): string[] {
  return [sshPluginBin, ...connectArgs(), ...extra];
}

export async function exec(w: Wire, script: string, timeoutMs = 20_000, cwd = ".") {
  return w.call("link.exec", { script, cwd, timeoutMs });
}

export function readPids(file: string): number[] {
  return readFileSync(file, "utf8").split(/\s+/).filter(Boolean).map(Number);
}

export { until } from "./helpers.js";

/** The built mu as a real child, run in a checkout. */
export function muAt(cwd: string, args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [muBin, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", ...env },
    encoding: "utf8",
    // Far past any real run: a hung mu still ends the test, a slow machine does not.
    timeout: 170_000,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: { ...process.env, GIT_CONFIG_GLOBAL: "/dev/null", GIT_CONFIG_NOSYSTEM: "1" },
  }).trim();
}

/** A checkout at `<dir>/checkout` on branch main with one commit: where the tests' mu runs. */
export function oneCommitCheckout(dir: string): string {
  const local = join(dir, "checkout");
  mkdirSync(local);
  git(local, "init", "-q", "-b", "main");
  writeFileSync(join(local, "a.txt"), "one\n");
  git(local, "add", "a.txt");
  git(local, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", "one");
  return local;
}

export const fakeHarness = join(packageRoot(), "test/fixtures/fake-harness");

/** The fake harness as a channel's --harness, resuming its session. */
export const harnessArgs = ["--harness", `sh ${fakeHarness} --resume {session} -p`];

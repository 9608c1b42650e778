import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCli } from "../host/cli/run.js";
import { MuError } from "../host/errors.js";
import { packageRoot } from "../host/package-root.js";
import { realPorts } from "../host/ports/real.js";
import { World } from "../sim/plugin/world.js";

export const muBin = join(packageRoot(), "dist/host/cli/mu.cjs");

/**
 * Under `npm run mutate -- --part contract` Stryker names its active mutant
 * in this variable; a mu a test starts gets it, as the scenario runner's do.
 * Unset otherwise.
 */
export function mutantEnv(): Record<string, string> {
  const id = process.env.__STRYKER_ACTIVE_MUTANT__;
  return id === undefined ? {} : { __STRYKER_ACTIVE_MUTANT__: id };
}

/**
 * An ES module script in a child Node, given only PATH, Stryker's variable
 * (so that a tests-part mutant runs in the child too) and `env`.
 */
export function nodeScript(
  script: string,
  env: Record<string, string> = {},
  opts: { nodeFlags?: string[]; uid?: number; gid?: number; cwd?: string } = {},
) {
  const { nodeFlags = [], ...spawnOpts } = opts;
  return spawnSync(process.execPath, [...nodeFlags, "--input-type=module", "-e", script], {
    env: { PATH: process.env.PATH ?? "", ...mutantEnv(), ...env },
    encoding: "utf8",
    ...spawnOpts,
  });
}

/** A temp state dir per test; nothing a test does can reach the user's DB. */
export function tempState(): { dir: string; env: Record<string, string>; done(): void } {
  const dir = mkdtempSync(join(tmpdir(), "mu-test-"));
  return {
    dir,
    env: { MU_STATE_DIR: dir, HOME: dir },
    done: () => rmSync(dir, { recursive: true, force: true }),
  };
}

/** mu in this process: the fast tier. */
export async function mu(args: string[], env: Record<string, string>) {
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    ports: realPorts({ PATH: process.env.PATH, ...env }),
    out: (s) => {
      stdout += s;
    },
    err: (s) => {
      stderr += s;
    },
  });
  return { code, stdout, stderr };
}

/** The built mu binary as a real child process. */
export function muProcess(args: string[], env: Record<string, string>) {
  const r = spawnSync(process.execPath, [muBin, ...args], {
    env: { PATH: process.env.PATH ?? "", ...mutantEnv(), ...env },
    encoding: "utf8",
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, signal: r.signal };
}

/** The built mu binary as a real child process that does not block this one (a plugin check runs for seconds). */
export function muChild(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, [muBin, ...args], {
      env: { PATH: process.env.PATH ?? "", ...mutantEnv(), ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => {
      stdout += b.toString();
    });
    child.stderr.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    child.on("close", (code) => done({ code, stdout, stderr }));
  });
}

/** The MuError a promise rejects with; anything else, or success, fails the test. */
export async function muError(p: Promise<unknown>): Promise<MuError> {
  try {
    await p;
  } catch (err) {
    if (err instanceof MuError) return err;
    throw err;
  }
  throw new Error("expected mu to refuse");
}

/** A state with a link-only sim registered as `sim` and a profile host `box` on it. */
export function simBoxState(): ReturnType<typeof tempState> {
  const st = tempState();
  const world = join(st.dir, "world");
  World.create(world, { preset: "link-only", instance: "sim-1" });
  const sim = join(packageRoot(), "sim/bin/mu-plugin-sim");
  for (const args of [
    ["plugin", "add", "sim", "--", sim, "--world", world],
    ["host", "add", "box", "--plugin", "sim"],
  ]) {
    const r = muProcess(args, st.env);
    if (r.code !== 0) throw new Error(`set-up: mu ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  }
  return st;
}

/** Waits for a condition another process makes true; a timeout fails, naming what was awaited. */
export async function until(what: string, ok: () => boolean, ms = 60_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

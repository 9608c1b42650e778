import { execFileSync, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { type Sshd, startSshd } from "../sshd.js";
import { cleanEnv } from "./measure.js";

// The ssh bench's world: a private sshd on 127.0.0.1 (the ssh tests' own,
// test/sshd.ts: its own keys and client config, never ~/.ssh), a checkout
// with one commit, and mu's state with mu-plugin-ssh registered and a host
// `box` on it. The remote's harness answers at once.

export interface SshWorld {
  sshd: Sshd;
  checkout: string;
  env: Record<string, string>;
  /** Runs mu in the checkout; throws on a non-zero exit. */
  mu(args: string[], extra?: Record<string, string>): string;
  /** The bare ssh a verb is paired with: the same client config, the same batch mode. */
  ssh: string[];
  /** A bare repository on the remote that `git push` over ssh reaches. */
  bareRepo: string;
  gitEnv: Record<string, string>;
  done(): Promise<void>;
}

export function git(cwd: string, env: Record<string, string>, ...args: string[]): string {
  return execFileSync("git", args, { cwd, env, encoding: "utf8" }).trim();
}

export async function sshWorld(dir: string): Promise<SshWorld> {
  const sshd = await startSshd();
  const root = packageRoot();
  const mu = join(root, "dist/host/cli/mu.cjs");
  const env = { ...cleanEnv(), MU_STATE_DIR: join(dir, "state"), MU_MUX: "sim" };
  const gitEnv = {
    ...cleanEnv(),
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "b",
    GIT_AUTHOR_EMAIL: "b@b",
    GIT_COMMITTER_NAME: "b",
    GIT_COMMITTER_EMAIL: "b@b",
  };
  const checkout = join(dir, "checkout");
  mkdirSync(checkout, { recursive: true });
  git(checkout, gitEnv, "init", "-q", "-b", "main");
  writeFileSync(join(checkout, "a.txt"), "one\n");
  git(checkout, gitEnv, "add", "a.txt");
  git(checkout, gitEnv, "commit", "-q", "-m", "one");
  // A harness that answers at once: the turn's cost is mu's and the link's.
  const harness = join(sshd.dir, "quick-harness");
  writeFileSync(harness, '#!/bin/sh\ncat >/dev/null\necho "done ($1)"\n', { mode: 0o755 });
  const run = (args: string[], extra: Record<string, string> = {}): string => {
    const r = spawnSync(process.execPath, [mu, ...args], {
      cwd: checkout,
      env: { ...env, ...extra },
      encoding: "utf8",
      timeout: 170_000,
    });
    if (r.status !== 0)
      throw new Error(`mu ${args.join(" ")} exited ${r.status}: ${(r.stderr ?? "").trim()}`);
    return r.stdout;
  };
  const plugin = [
    join(root, "plugins/ssh/bin/mu-plugin-ssh"),
    "--dest",
    "box",
    "-F",
    sshd.config,
    "--home",
    sshd.home,
    "--harness",
    `sh ${harness} {session}`,
  ];
  const ssh = ["ssh", "-F", sshd.config, "-o", "BatchMode=yes", "-T", "box"];
  try {
    run(["plugin", "add", "ssh", "--", ...plugin]);
    run(["host", "add", "box", "--plugin", "ssh", "--repo", "agents/repo"]);
    run(["host", "push", "box"]);
    const bareRepo = join(sshd.home, "bare.git");
    execFileSync("git", ["init", "-q", "--bare", bareRepo], { env: gitEnv });
  } catch (err) {
    await sshd.done();
    throw err;
  }
  return {
    sshd,
    checkout,
    env,
    mu: run,
    ssh,
    bareRepo: join(sshd.home, "bare.git"),
    gitEnv: { ...gitEnv, GIT_SSH_COMMAND: ssh.slice(0, -2).join(" ") },
    done: () => sshd.done(),
  };
}

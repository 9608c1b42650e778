import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { mutantEnv } from "./mutant-env.js";
import type { Ran } from "./ran.js";
import { expand, type Places } from "./sandbox.js";
import type { ShStep } from "./scenario.js";

/** A child's whole output and how it ended. */
export function collect(child: ChildProcess): Promise<Ran> {
  // Decoded once at the end: a character split across two reads must not
  // read as two replacement characters.
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout?.on("data", (b: Buffer) => out.push(b));
  child.stderr?.on("data", (b: Buffer) => err.push(b));
  const text = (bs: Buffer[]) => Buffer.concat(bs).toString("utf8");
  return new Promise((done, fail) => {
    child.on("error", fail);
    child.on("close", (exit, signal) =>
      done({ exit, signal, stdout: text(out), stderr: text(err) }),
    );
  });
}

/** A setup or inspection script: git gets a fixed identity so commits work anywhere. */
export function runSh(box: Places, step: ShStep): Promise<Ran> {
  const who = { name: "mu scenario", email: "scenario@mu.invalid" };
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: join(box.root, "home"),
    GIT_AUTHOR_NAME: who.name,
    GIT_AUTHOR_EMAIL: who.email,
    GIT_COMMITTER_NAME: who.name,
    GIT_COMMITTER_EMAIL: who.email,
    GIT_CONFIG_NOSYSTEM: "1",
    ...mutantEnv(),
  };
  const child = spawn("/bin/sh", ["-ec", expand(box, step.sh)], {
    env,
    cwd: box.root,
    stdio: ["ignore", "pipe", "pipe"],
  });
  return collect(child);
}

import { spawn } from "node:child_process";
import type { ScriptEnv } from "./machine.js";
import type { World } from "./world.js";

// Misbehaviours that need more than a flag in the protocol loop: each is a
// plausible plugin bug the contract suite exists to catch, kept out of
// serve.ts so the correct behaviour there stays easy to read.

type Misbehaviour = { execIgnoresTimeout: true } | { releaseErrorsWhenGone: true };

type Outcome =
  | { value: unknown }
  | { error: { code: number; message: string; data: { kind: "permanent" } } };

export function misbehave(
  a: Misbehaviour,
  world: World,
  params: Record<string, unknown>,
  env: ScriptEnv,
): Promise<Outcome> {
  if ("execIgnoresTimeout" in a) return execToCompletion(world, String(params.script ?? ""), env);
  return Promise.resolve(releaseOnce(world, String(params.key)));
}

/** A link.exec that never looks at timeoutMs: the script runs as long as it likes. */
function execToCompletion(world: World, script: string, env: ScriptEnv): Promise<Outcome> {
  return new Promise((resolve) => {
    const child = spawn("/bin/sh", ["-c", script], {
      cwd: world.dir,
      env: env as NodeJS.ProcessEnv,
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
    child.on("close", (code) => {
      resolve({ value: { exitCode: code, stdout, stderr, partial: false } });
    });
  });
}

/** A release that treats "already released" as an error, which the spec forbids. */
function releaseOnce(world: World, key: string): Outcome {
  let released = false;
  world.update((s) => {
    const h = s.hosts?.[key];
    if (h && !h.released) {
      h.released = true;
      s.effects[`host.release:${key}`] = (s.effects[`host.release:${key}`] ?? 0) + 1;
      released = true;
    }
  });
  if (released) return { value: null };
  return {
    error: {
      code: -32000,
      message: `sim: no machine to release under key ${key}`,
      data: { kind: "permanent" },
    },
  };
}

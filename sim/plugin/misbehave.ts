import { Machines, type ScriptEnv } from "./machine.js";
import type { World } from "./world.js";

// Misbehaviours that need more than a flag in the protocol loop: each is a
// plausible plugin bug the contract suite exists to catch, kept out of
// serve.ts so the correct behaviour there stays easy to read.

type Misbehaviour =
  | { execIgnoresTimeout: true }
  | { releaseErrorsWhenGone: true }
  | { releaseOnlyOwn: true }
  | { acquireIgnoresFence: true };

type Outcome =
  | { value: unknown }
  | { error: { code: number; message: string; data: { kind: "permanent" } } };

export function misbehave(
  a: Misbehaviour,
  world: World,
  params: Record<string, unknown>,
  env: ScriptEnv,
  pid: number,
): Promise<Outcome> {
  if ("execIgnoresTimeout" in a) return execToCompletion(world, params, env);
  if ("releaseOnlyOwn" in a) return Promise.resolve(releaseOwn(world, String(params.key), pid));
  if ("acquireIgnoresFence" in a) return Promise.resolve(acquireAnyway(world, String(params.key)));
  return Promise.resolve(releaseOnce(world, String(params.key)));
}

/** A link.exec that never looks at timeoutMs: the script runs as long as it likes, as any other would. */
async function execToCompletion(
  world: World,
  params: Record<string, unknown>,
  env: ScriptEnv,
): Promise<Outcome> {
  const script = String(params.script ?? "");
  const cwd = String(params.cwd ?? ".");
  return { value: await new Machines(world, env).exec(params.target, script, cwd, NO_LIMIT_MS) };
}

/** The longest timer Node keeps: past it, setTimeout fires at once. */
const NO_LIMIT_MS = 2 ** 31 - 1;

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

/**
 * A release that knows only the machines its own process acquired, as a
 * plugin whose handles live in memory would: after a restart, mu's reissued
 * release meets an error instead of the machine going.
 */
function releaseOwn(world: World, key: string, pid: number): Outcome {
  const h = world.state().hosts?.[key];
  if (h && h.by !== pid)
    return {
      error: {
        code: -32000,
        message: `sim: this process acquired no machine under key ${key}`,
        data: { kind: "permanent" },
      },
    };
  world.update((s) => {
    const mine = s.hosts?.[key];
    if (mine && !mine.released) {
      mine.released = true;
      s.effects[`host.release:${key}`] = (s.effects[`host.release:${key}`] ?? 0) + 1;
    }
  });
  return { value: null };
}

/**
 * An acquire that never looks at fences: a key a fenced lookup answered
 * none for still gets a machine when its acquire arrives late.
 */
function acquireAnyway(world: World, key: string): Outcome {
  let handle = "";
  world.update((s) => {
    const h = s.hosts?.[key];
    if (h) {
      handle = h.handle;
      return;
    }
    const effect = `host.acquire:${key}`;
    s.effects[effect] = (s.effects[effect] ?? 0) + 1;
    handle = `sim-${key}-${s.effects[effect]}`;
    s.hosts = { ...s.hosts, [key]: { handle, released: false } };
  });
  return { value: { handle } };
}

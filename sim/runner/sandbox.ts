import {
  chmodSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { liveProcesses } from "../../host/ports/proc-scan.js";
import { World, type WorldConfig } from "../plugin/world.js";
import type { InstallStep } from "./scenario.js";
import { proxiedWorlds } from "./via-proxy.js";

// One scenario's private corner of the machine: state dir, home, world,
// and any launcher copies it installs. Everything a scenario starts can be
// found again by this root in its environment.

export interface Sandbox {
  root: string;
  state: string;
  db: string;
  world: World;
  /** With --via-proxy: the simulated plugin behind the proxy, whose state is the truth. */
  inner?: World;
  snapshot?: Buffer;
  /** Background mu runs not yet joined, each with its own check. */
  background: Promise<{ problems: string[]; step: string }>[];
  /** Environment for every mu step (a step's own env wins). */
  env: Record<string, string>;
  /** Values earlier steps captured from their output, for ${var:NAME}. */
  vars: Record<string, string>;
  /** When the sandbox was made, in /proc's ticks since boot (at 100 a second, one early). */
  startTicks?: number;
  /** The directories the traced mu steps so far wrote their traces in. */
  traceDirs: Set<string>;
}

export function makeSandbox(
  world: Partial<WorldConfig> | undefined,
  env: Record<string, string> = {},
  viaProxy = false,
): Sandbox {
  const startTicks = ticksNow() - 1;
  const root = mkdtempSync(join(tmpdir(), "mu-scenario-"));
  mkdirSync(join(root, "home"));
  mkdirSync(join(root, "bin"));
  // mu's scratch files (TMPDIR) stay in the sandbox, where a step can look for what it left.
  mkdirSync(join(root, "tmp"));
  const config: WorldConfig = { preset: "link-only", instance: "sim-1", ...world };
  const worlds = viaProxy
    ? proxiedWorlds(join(root, "world"), config)
    : { outer: World.create(join(root, "world"), config) };
  return {
    root,
    state: join(root, "state"),
    db: join(root, "state", "mu.db"),
    world: worlds.outer,
    ...("inner" in worlds ? { inner: worlds.inner } : {}),
    background: [],
    env,
    vars: {},
    startTicks,
    traceDirs: new Set(),
  };
}

export const simLauncher = () => join(packageRoot(), "sim/bin/mu-plugin-sim");

/**
 * A launcher copy that imports the built sim by absolute path, so it runs
 * from anywhere; or, given its bytes, a file holding just those.
 */
export function install(box: Sandbox, spec: InstallStep["install"]): string {
  const { as, mode = "0755", kind = "file", owner } = spec;
  const path = join(box.root, "bin", as);
  // Giving a file away takes root here; the virtual engine models it.
  if (owner !== undefined)
    throw new Error(`install ${as}: owner needs the virtual engine (virtualOnly)`);
  if (kind === "removed") {
    rmSync(path, { recursive: true });
    return path;
  }
  if (kind === "directory") {
    mkdirSync(path);
    return path;
  }
  const target = kind === "symlink" ? join(box.root, "bin", `.target-${as}`) : path;
  writeFileSync(
    target,
    installBytes(spec) ??
      `#!/usr/bin/env node\nimport ${JSON.stringify(join(packageRoot(), "dist/sim/main.js"))};\n`,
  );
  chmodSync(target, Number.parseInt(mode, 8));
  if (kind === "symlink") symlinkSync(target, path);
  return path;
}

/**
 * The bytes an install step gives its file, the same on both engines, or
 * undefined for the launcher's own text.
 */
export function installBytes(spec: InstallStep["install"]): Buffer | undefined {
  const once =
    spec.hex !== undefined
      ? Buffer.from(spec.hex, "hex")
      : spec.text !== undefined
        ? Buffer.from(spec.text, "utf8")
        : undefined;
  // alloc repeats a fill buffer to the length asked; an empty one fills nothing.
  return once && (once.length === 0 ? once : Buffer.alloc(once.length * (spec.repeat ?? 1), once));
}

/** What a scenario's ${…} names: a sandbox's, or the virtual engine's stand-ins. */
export interface Places {
  root: string;
  world: { dir: string };
  vars: Record<string, string>;
  /** The sim's executable; the sandbox's launcher when absent. */
  sim?: string;
}

/** Expands ${sim}, ${world}, ${root}, ${bin:NAME} and captured ${var:NAME} in one argument. */
export function expand(box: Places, arg: string): string {
  return arg.replace(
    /\$\{(sim|world|root|(bin|var):([A-Za-z0-9._-]+))\}/g,
    (_m, what: string, kind?: string, name?: string) => {
      if (what === "sim") return box.sim ?? simLauncher();
      if (what === "world") return box.world.dir;
      if (what === "root") return box.root;
      if (kind === "var") {
        const v = box.vars[name ?? ""];
        if (v === undefined)
          throw new Error(`\${var:${name}} was never captured by an earlier step`);
        return v;
      }
      return join(box.root, "bin", name ?? "");
    },
  );
}

/** Now, in the clock ticks since boot that /proc gives a process's start in. */
function ticksNow(): number {
  try {
    return Math.floor(Number(readFileSync("/proc/uptime", "utf8").split(" ")[0]) * 100);
  } catch {
    return 0;
  }
}

/** Every live process whose environment or command line names this sandbox. */
export function processesOf(
  box: Pick<Sandbox, "root" | "startTicks">,
): { pid: number; cmd: string }[] {
  const found: { pid: number; cmd: string }[] = [];
  for (const p of liveProcesses()) {
    // One started before the sandbox cannot be its own: skip reading its
    // command line and environment, most of a scan's cost on a busy machine.
    if (p.pid === process.pid || p.startTime < (box.startTicks ?? 0)) continue;
    const cmd = p.cmdline();
    if (cmd.includes(box.root) || p.environ().includes(box.root)) found.push({ pid: p.pid, cmd });
  }
  return found;
}

import * as nodeFs from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { WorldFs } from "../plugin/world.js";
import { capture, checkSh } from "../runner/judge.js";
import type { Ran } from "../runner/ran.js";
import { runSh } from "../runner/run-sh.js";
import type { Places } from "../runner/sandbox.js";
import type { ShStep } from "../runner/scenario.js";
import type { VirtualClock } from "./ports.js";

// The real side of a virtual run: a temp directory for the world and the
// steps' files (the sim's machines are directories in it, where scripts and
// git really run) and sh steps as real processes. A step's working directory
// is not here: it reaches mu through its ports (run-scenario.ts), so this
// process's own never moves and the engine runs in a worker thread too.
// Virtual time stands still while any of it runs: between steps
// nothing drives the clock, and during a step the clock waits for a real
// child to end (ports.ts).

export interface RealDir {
  root: string;
  worldDir: string;
  worldFs: WorldFs;
  remove(): void;
}

export function makeRealDir(): RealDir {
  const root = mkdtempSync(join(tmpdir(), "mu-virtual-"));
  nodeFs.mkdirSync(join(root, "home"));
  return {
    root,
    worldDir: join(root, "world"),
    worldFs: nodeFs,
    remove: () => nodeFs.rmSync(root, { recursive: true, force: true }),
  };
}

/** A script that only waits: on the virtual engine it lets that much virtual time pass. */
const JUST_SLEEP = /^\s*sleep\s+(\d+(?:\.\d+)?)\s*$/;

/** Runs an sh step for real, or as virtual time when all it does is sleep; returns its problems. */
export async function shStep(places: Places, clock: VirtualClock, step: ShStep): Promise<string[]> {
  const wait = JUST_SLEEP.exec(step.sh);
  if (wait) {
    await clock.advance(Number(wait[1]) * 1000);
    return [];
  }
  const r = await runSh(places, step);
  return [...checkSh(step, r), ...capture(places, step.capture, r)];
}

export type { Ran };

/**
 * The worktrees still on the sim's machines, as paths from the world's
 * directory (`machines/<host>/mu/trees/<workstream>/<agent>`): git made
 * them on the real disk, so that is where they are looked for.
 */
export function treesOnHosts(worldDir: string): string[] {
  const under = (p: string) =>
    nodeFs.existsSync(join(worldDir, p))
      ? nodeFs
          .readdirSync(join(worldDir, p), { withFileTypes: true })
          .filter((d) => d.isDirectory())
          .map((d) => `${p}/${d.name}`)
      : [];
  return under("machines")
    .flatMap((m) => under(`${m}/mu/trees`))
    .flatMap(under)
    .sort();
}

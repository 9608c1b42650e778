import { readdirSync } from "node:fs";
import { keepFreshImage } from "../../host/store/open-db.js";
import { sqlJs } from "../../host/store/sqljs.js";

// Loading a module is real work: its files are read on libuv's threads, or
// handed over by a loader thread, where the virtual clock cannot always see
// it. A verb's first dynamic import inside a run then races the run's virtual
// timers, and how busy the machine is decides which wins: the same seed gave
// another run. Every module a run may import on the way is loaded here,
// before any run, so a run does no real work but its own.

let loading: Promise<void> | undefined;

const moduleFile = (f: string) => /\.(js|ts)$/.test(f) && !f.endsWith(".d.ts");

async function load(): Promise<void> {
  // The verbs mu's CLI imports on first use, in a fixed order.
  const verbs = new URL("../../host/verbs/", import.meta.url);
  for (const f of readdirSync(verbs).filter(moduleFile).sort())
    await import(new URL(f, verbs).href);
  // The sim's own lazy import (a fault that makes it misbehave).
  await import("../plugin/misbehave.js");
}

/** Loads, once per process, every module a run may import lazily. */
export function preloadModules(): Promise<void> {
  loading ??= load();
  return loading;
}

/**
 * sql.js compiles its WebAssembly on a real thread, out of the clock's
 * sight, and a verb's module loads on first use (under vitest, over a
 * message to its main process): both are done before a run, so neither can
 * overlap its virtual timers.
 */
export async function readyForRuns(): Promise<void> {
  await sqlJs();
  await preloadModules();
  await keepFreshImage();
}

import { rng } from "./rng.js";

// Swarm testing (Groce et al., "Swarm Testing", 2012): a seed does not draw
// from every fault kind and every verb at once, since a workload that may do
// everything does each thing too rarely to reach what needs many of one
// kind (many sends with no close between, say) or the absence of another.
// Half the seeds draw, from a stream of their own, which fault kinds and
// which verbs are on; a draw that lands on one that is off moves to the next
// one on, so it takes nothing more from the workload's own stream.

export interface Swarm {
  /** Indices into the fault kinds (workload-script.ts's anyFault) that are on; all when absent. */
  faults?: ReadonlySet<number>;
  /** Names of the verb kinds that are on; all when absent. */
  verbs?: ReadonlySet<string>;
}

/** How many fault kinds anyFault draws from. */
export const FAULT_KINDS = 11;

/** The verb kinds the serial workloads draw (workloads.ts, host-workload.ts). */
export const VERB_KINDS = [
  "spawn",
  "send",
  "steer",
  "fresh",
  "force",
  "command",
  "interrupt",
  "abort",
  "answer",
  "read",
  "list",
  "state",
  "wait",
  "reattach",
  "close",
  "remove",
  "acquire",
  "status",
  "release",
] as const;

export function swarmOf(seed: number): Swarm {
  const r = rng((seed ^ 0x5a4a_12a0) >>> 0);
  if (r() < 0.5) return {};
  const faults = new Set([...Array(FAULT_KINDS).keys()].filter(() => r() < 0.5));
  const verbs = new Set<string>(VERB_KINDS.filter(() => r() < 0.5));
  return { faults: faults.size > 0 ? faults : new Set([0]), verbs };
}

/** The drawn choice if it is on, else the next one on after it, round the list. */
export function onOrNext<T>(xs: readonly T[], i: number, on: (x: T) => boolean): T {
  for (let k = 0; k < xs.length; k++) {
    const x = xs[(i + k) % xs.length] as T;
    if (on(x)) return x;
  }
  return xs[i] as T;
}

import type { Liveness, ProcessId } from "./types.js";

/**
 * A process that is not this one and still lives: another mu at work on a
 * record (its writer, its resolver), which this one must leave to it.
 */
export function anotherLive(liveness: Liveness, p: ProcessId | null | undefined): p is ProcessId {
  if (!p) return false;
  const me = liveness.self();
  return !(p.pid === me.pid && p.start === me.start) && liveness.alive(p);
}

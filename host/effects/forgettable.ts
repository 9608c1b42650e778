import type { Database } from "sql.js";
import { getHost } from "../hosts/records.js";
import { startCaps } from "../jobs/start-caps.js";
import { getPlugin } from "../plugin/registry.js";
import type { Ports, ProcessId } from "../ports/types.js";
import { decideFirst, STUCK_FOR_GOOD } from "./decide.js";
import type { Intent } from "./journal.js";

// Whether a pending start or acquire is one no rule can ever settle, judged
// from mu's own records alone (mu state and a refused rm ask no plugin): the
// registered declaration, the clock, and whether its writer or a resolver
// still runs. A keyed one is judged only by its lookup's answer, which the
// verb that settles it asks for; that verb then names forget itself.

export interface Witness {
  alive(id: ProcessId): boolean;
  now: number;
}

export function stuckForGood(db: Database, i: Intent, w: Witness): boolean {
  if (i.method !== "job.start" && i.method !== "host.acquire") return false;
  if (startOnReleasedMachine(db, i))
    return !w.alive(i.writer) && !(i.resolver !== null && w.alive(i.resolver));
  const reg = getPlugin(db, i.plugin);
  if (!reg) return false;
  const seams = reg.declaration.seams;
  const caps = i.method === "host.acquire" ? seams.host?.acquire : startCaps(seams, i);
  const { row } = decideFirst(i, caps, {
    instance: reg.instance,
    writerAlive: w.alive(i.writer),
    resolverAlive: i.resolver !== null && w.alive(i.resolver),
    // Only a lookup's none asks about the group, and no lookup is judged here.
    groupEmpty: false,
    now: w.now,
  });
  return STUCK_FOR_GOOD.includes(row);
}

/** This invocation's view of liveness and time, for the judgement above. */
export function witnessOf(ports: Pick<Ports, "liveness" | "clock">): Witness {
  return { alive: (id) => ports.liveness.alive(id), now: ports.clock.now() };
}

/**
 * A start whose machine mu itself released since: no job can start there
 * any more, and whatever it may have started went with the machine. No
 * rule can learn which, so only a person ends it (mu agent forget).
 */
export function startOnReleasedMachine(db: Database, i: Intent): boolean {
  if (i.method !== "job.start") return false;
  const name = (i.params as { target?: { host?: { name?: unknown } } }).target?.host?.name;
  return typeof name === "string" && getHost(db, name)?.state === "released";
}

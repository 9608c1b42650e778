import type { Database } from "sql.js";
import type { Io } from "../cli/io.js";
import { deleteHost, getHost, putHost } from "../hosts/records.js";
import type { Supervisor } from "../plugin/supervisor.js";
import type { Store } from "../store/index.js";
import type { Intent } from "./journal.js";
import { resolvePending, type SubjectRules } from "./resolve.js";

// A provider host's pending acquire or release, resolved by the rule table.

export { EFFECT_MS, READ_MS } from "./resolve.js";

export interface HostAcquired {
  handle: string;
  deadlineAt?: number;
  idleReclaimMs?: number;
  maxJobs?: number;
}

/** What mu records as facts: everything of the acquire result but the handle. */
export function acquiredFacts(r: HostAcquired): Record<string, unknown> {
  const { handle: _h, ...facts } = r;
  return facts;
}

function hostRules(name: string): SubjectRules {
  return {
    caps: (hello) => hello.seams.host?.acquire,
    lookupMethod: "host.lookup",
    fileHandle: () => false,
    rowName: (_i, row) => row,
    record: (db, i, result, now) => record(db, i, name, result, now),
    rollback: (db, i) => {
      if (i.method === "host.acquire" && getHost(db, name)?.key === i.key) deleteHost(db, name);
    },
  };
}

/** Resolves every pending intent on the host; throws when one stays pending. */
export function resolveHost(
  io: Io,
  store: Store,
  sup: Supervisor,
  name: string,
  next: string,
): Promise<void> {
  return resolvePending(io, store, sup, `host:${name}`, next, hostRules(name));
}

/** What a definite answer to a host effect means for the host record. */
function record(db: Database, i: Intent, name: string, result: unknown, now: number): void {
  const h = getHost(db, name);
  // The name may hold another acquire's record by now (a release settled
  // late, while a new acquire of the name ran): that record is not this
  // intent's to change, or mu would lose track of the other machine.
  if (!h || h.key !== i.key) return;
  if (i.method === "host.acquire") {
    const r = result as HostAcquired;
    putHost(db, {
      ...h,
      handle: r.handle,
      state: "ready",
      facts: acquiredFacts(r),
      updatedAt: now,
    });
  } else if (i.method === "host.release") {
    putHost(db, { ...h, state: "released", updatedAt: now });
  }
}

// What the suite made through the plugin, tallied as each call goes out
// and comes back, so the end of the run knows what to stop and remove
// (leftovers.ts).

/** The jobs the suite's starts asked for, by key, and whether a stop proved each gone. */
export interface Made {
  jobs: Map<string, { target: unknown; stopped: boolean }>;
  fenced: Set<string>;
  /** Every key an acquire was sent for, its machine's handle once known, and whether a release answered null. */
  hosts: Map<string, { handle?: string; released: boolean }>;
}

export const nothingMade = (): Made => ({ jobs: new Map(), fenced: new Set(), hosts: new Map() });

/** Session.call's tally: a start counts before it is answered, since it may take effect anyway. */
export function tally(
  made: Made,
  method: string,
  params: Record<string, unknown>,
  reply?: unknown,
) {
  const key = typeof params.key === "string" ? params.key : undefined;
  if (!key) return;
  if (method === "job.start") {
    const known = made.jobs.get(key);
    if (!known) made.jobs.set(key, { target: structuredClone(params.target), stopped: false });
    else if (reply === undefined) known.stopped = false;
    const handle = (reply as { handle?: unknown } | null | undefined)?.handle;
    const job = (known?.target as { job?: Record<string, unknown> } | undefined)?.job;
    if (job && typeof handle === "string") job.handle = handle;
  } else if (method === "job.stop" && reply === null) {
    const j = made.jobs.get(key);
    if (j) j.stopped = true;
  } else if (method === "job.lookup" && params.fence === true) made.fenced.add(key);
  else if (method === "host.acquire") {
    const known = made.hosts.get(key) ?? { released: false };
    const handle = (reply as { handle?: unknown } | null | undefined)?.handle;
    if (typeof handle === "string" && handle !== known.handle)
      made.hosts.set(key, { handle, released: false });
    else made.hosts.set(key, known);
  } else if (method === "host.release" && reply === null) {
    const h = made.hosts.get(key);
    if (h) h.released = true;
  }
}

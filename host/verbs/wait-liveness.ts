import type { Io } from "../cli/io.js";
import { envMs, MS_VARIABLES } from "../env-ms.js";
import type { LinkHost } from "../hosts/link-host.js";
import { fencedRead, type JobTarget } from "../jobs/job-calls.js";
import { type JobRecord, jobByKey } from "../jobs/records.js";
import type { Supervisor } from "../plugin/supervisor.js";
import type { Store } from "../store/index.js";

// Liveness while mu wait waits. A watch on a job that ends (its process dies,
// or another mu closes the agent) never gets its notification, so the wait
// asks the job itself now and then, as it does once before watching.

export const DEFAULT_WAIT_LIVENESS_MS = MS_VARIABLES.MU_WAIT_LIVENESS_MS.fallback;

/** The reason a wait gives for an agent another mu closed while it waited. */
export const CLOSED_MEANWHILE = "closed while the wait ran";

/** An open watch, with what it takes to ask its job how it is. */
export interface Watched {
  label: string;
  job: JobRecord;
  host: LinkHost;
  target: JobTarget;
  watchId: string;
  cancel(): void;
}

export interface JobStatus {
  state: string;
  reason?: string;
  exit?: number | null;
}

/** What the wait says of an agent whose job ended or was lost. */
export function deadLine(label: string, s: JobStatus): string {
  return `${label} dead (${s.reason ?? `ended, exit ${s.exit ?? "unknown"}`})`;
}

export const isDead = (s: JobStatus) => s.state === "ended" || s.state === "lost";

/** A dead agent as one of the wait's outcomes: its line, and the facts --json shows. */
export function deadOutcome(label: string, s: JobStatus) {
  return {
    agent: label,
    line: deadLine(label, s),
    kind: "dead" as const,
    facts: { reason: s.reason ?? null, exit: s.exit ?? null },
  };
}

/**
 * Every MU_WAIT_LIVENESS_MS, each watch still open: its job's record (gone
 * once another mu closed the agent), then job.status. `ended` takes the
 * watch out of `open`. A status that fails is asked again next time: the
 * wait's own limits still hold. stop() cancels a status still in flight
 * and waits for the stop sequence that cancel starts to end: left to its
 * deadline, it would stop the plugin under the calls that follow the wait
 * (its in-life collect), which then fail for no fault of their own.
 */
export function pollLiveness(
  io: Io,
  store: Store,
  sup: Supervisor,
  open: readonly Watched[],
  ended: (w: Watched, s: JobStatus) => void,
): { stop(): Promise<void> } {
  const every = envMs(io.ports.env, "MU_WAIT_LIVENESS_MS");
  let stopped = false;
  const warned = new Set<Watched>();
  let timer: { cancel(): void } | undefined;
  const cancel = new AbortController();
  /** The status call in flight, and the plugin it went to. */
  let asking: { plugin: string; done: Promise<unknown> } | undefined;
  const tick = async () => {
    const watched = [...open];
    // One read for every watched job's record.
    const states = await store.read((db) => watched.map((w) => jobByKey(db, w.job.key)?.state));
    for (const [k, w] of watched.entries()) {
      if (stopped) return;
      if (!open.includes(w)) continue;
      if (states[k] !== "running") {
        ended(w, { state: "ended", reason: CLOSED_MEANWHILE });
        continue;
      }
      try {
        const call = fencedRead(
          io,
          sup,
          w.host,
          w.job,
          "job.status",
          { target: w.target },
          undefined,
          cancel.signal,
        );
        asking = { plugin: w.host.reg.name, done: call.catch(() => undefined) };
        const s = (await call).result as JobStatus;
        asking = undefined;
        if (stopped || !open.includes(w) || !isDead(s)) continue;
        // A close by another mu journals its stop before sending it, and ends
        // the record only once the stop is answered: a job that reads dead
        // while that stop is pending (or after it settled) was closed, not lost.
        const closing = await store.read(
          (db) =>
            jobByKey(db, w.job.key)?.state !== "running" ||
            db.exec("SELECT 1 FROM intents WHERE method = 'job.stop' AND key = ?", [w.job.key])
              .length > 0,
        );
        if (!stopped && open.includes(w))
          ended(w, closing ? { state: "ended", reason: CLOSED_MEANWHILE } : s);
      } catch (err) {
        asking = undefined;
        // Asked again at the next tick; said once, so a host that cannot be
        // reached does not leave the wait silent until its limit.
        if (!warned.has(w) && !stopped) {
          warned.add(w);
          io.err(
            `mu: wait: cannot ask ${w.label}'s job whether it runs (${(err as Error).message}); still waiting\n`,
          );
        }
      }
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = io.ports.clock.setTimer(every, () => {
      void tick().then(schedule, schedule);
    });
  };
  if (every > 0) schedule();
  return {
    async stop() {
      stopped = true;
      timer?.cancel();
      const inFlight = asking;
      if (!inFlight) return;
      cancel.abort();
      await inFlight.done;
      await sup.afterStop(inFlight.plugin);
    },
  };
}

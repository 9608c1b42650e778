import type { WorldState } from "./world.js";

// The testbed's view of the instance fence: every machine and job in the
// world remembers the instance the plugin's handshake named when it was
// made, and a call that names one of them in a session whose handshake names
// another is noted in the transcript. mu must never cause such a note: a call
// about a recorded subject goes only to the instance it was recorded under.

type Params = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The instance the subject this call names was made under, when the world knows it. */
export function subjectInstance(s: WorldState, method: string, p: Params): string | undefined {
  const target = p.target as { host?: { handle?: unknown }; job?: { key?: unknown } } | undefined;
  const jobKey = str(target?.job?.key) ?? (method.startsWith("job.") ? str(p.key) : undefined);
  if (jobKey !== undefined) return s.jobs?.[jobKey]?.instance;
  if (!method.startsWith("host.")) return undefined;
  const key = str(p.key);
  if (key !== undefined) return s.hosts?.[key]?.instance;
  const handle = str(target?.host?.handle);
  return Object.values(s.hosts ?? {}).find((h) => h.handle === handle)?.instance;
}

/**
 * A call about a job that names a machine other than the one the job was
 * started on: what the call says, and where the job runs. mu must never
 * cause one: every call about a recorded job goes to the machine it was
 * recorded under, even once that name belongs to another machine.
 */
export function otherMachine(
  s: WorldState,
  method: string,
  p: Params,
): { method: string; job: string; on: string; named: string } | undefined {
  if (method === "job.start") return undefined;
  const target = p.target as { host?: { handle?: unknown }; job?: { key?: unknown } } | undefined;
  const key = str(target?.job?.key);
  const named = str(target?.host?.handle);
  if (key === undefined || named === undefined) return undefined;
  const on = s.jobs?.[key]?.host;
  return on !== undefined && on !== named ? { method, job: key, on, named } : undefined;
}

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

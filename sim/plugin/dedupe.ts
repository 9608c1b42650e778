import type { WorldState } from "./world.js";

// Exact dedupe as the sim keeps it for job.start and host.acquire. The window
// runs from the first time any sim process saw the key arrive, not from the
// first time one applied it: a call held up in an old process (a slow
// provider, a plugin that outlived a killed mu) may apply after mu's resend
// did, and is still the same request, so it must get the first result.

/** Notes when a call for this key arrived, if no call for it arrived before. */
export function noteArrival(s: WorldState, key: string, at: number): void {
  if (s.keyArrived?.[key] === undefined) s.keyArrived = { ...s.keyArrived, [key]: at };
}

/** The earlier result this call repeats, if it is a repeat inside the window. */
export function repeatOf(
  s: WorldState,
  key: string,
  sha: string,
  windowMs: number | undefined,
  arrivedAt: number,
): { result: unknown } | undefined {
  const seen = s.dedupe?.[key];
  if (!seen || windowMs === undefined || seen.sha !== sha) return undefined;
  const first = Math.min(s.keyArrived?.[key] ?? seen.at, seen.at);
  return arrivedAt - first < windowMs ? seen : undefined;
}

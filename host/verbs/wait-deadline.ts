import type { FoundAgent } from "../jobs/agent-host.js";
import type { Store } from "../store/index.js";

// When a wait must stop for a provider host's deadline: the earliest margin
// among the hosts its agents run on, once per host per deadline.

/** The earliest deadline margin of the hosts the agents run on, not yet fired. */
export async function nextDeadline(
  store: Store,
  agents: FoundAgent[],
  marginMs: number,
): Promise<{ at: number; host: string; deadlineAt: number; agent: string } | null> {
  let best: { at: number; host: string; deadlineAt: number; agent: string } | null = null;
  for (const a of agents) {
    const d = a.host.provider?.facts.deadlineAt;
    if (typeof d !== "number" || !a.host.provider) continue;
    const host = a.host.provider.name;
    const fired = await store.read(
      (db) =>
        db.exec("SELECT 1 FROM deadline_events WHERE host = ? AND deadline_at = ?", [host, d])
          .length > 0,
    );
    if (fired) continue;
    const at = d - marginMs;
    if (!best || at < best.at)
      best = { at, host, deadlineAt: d, agent: `${a.job.workstream}/${a.job.agent}` };
  }
  return best;
}

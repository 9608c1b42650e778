import type { SimAgent, World, WorldState } from "./world.js";

// The channel side of the simulated world: each agent's turns progress on
// the world clock. A delivery queues a turn that takes turnMs; it settles
// when the clock passes its end, one more run in the incarnation. Time is
// evaluated lazily on every read, so the agents keep working between plugin
// processes, and a scenario can advance the clock to let a turn settle.

export const DEFAULT_TURN_MS = 300;

export function newAgent(now: number, incarnation = 1): SimAgent {
  return { incarnation, runs: 0, since: now, turns: [], settled: [], receipts: {} };
}

/** Settles every turn whose end has passed. */
export function advance(a: SimAgent, now: number): void {
  while (a.turns.length > 0 && (a.turns[0]?.endsAt ?? Infinity) <= now) {
    const t = a.turns.shift();
    if (!t) break;
    a.runs += 1;
    // A message that starts "fail:" ends its turn with an error, as a
    // harness that exits non-zero does.
    if (t.text.startsWith("fail:")) {
      a.lastText = `sim: gave up on "${t.text}"`;
      a.lastError = "sim: the turn failed";
    } else {
      a.lastText = `sim: done with "${t.text}"`;
      delete a.lastError;
    }
    a.since = t.endsAt;
    a.settled.push({ runs: a.runs, text: a.lastText, at: t.endsAt });
    if (a.settled.length > 50) a.settled.shift();
  }
}

export function turnState(a: SimAgent): "idle" | "busy" | "blocked" {
  if (a.blocked) return "blocked";
  return a.turns.length > 0 ? "busy" : "idle";
}

/** Queues a turn; returns the run count before it (the delivery's baseline). */
export function deliver(
  a: SimAgent,
  now: number,
  turnMs: number,
  text: string,
  msgId?: string,
): number {
  const before = a.runs + a.turns.length;
  const last = a.turns[a.turns.length - 1]?.endsAt ?? now;
  if (a.turns.length === 0) a.since = now;
  a.turns.push({ text, ...(msgId ? { msgId } : {}), endsAt: Math.max(now, last) + turnMs });
  if (msgId) a.receipts[msgId] = { runs: before, at: now, incarnation: a.incarnation };
  return before;
}

export function reading(a: SimAgent): Record<string, unknown> {
  return { state: turnState(a), since: a.since, runs: a.runs, incarnation: a.incarnation };
}

/** The agent as an observation: `settled` says a turn past afterRuns has settled. */
export function observation(a: SimAgent, afterRuns: number): Record<string, unknown> {
  return {
    status: turnState(a),
    settled: a.runs > afterRuns,
    since: a.since,
    runs: a.runs,
    incarnation: a.incarnation,
    ...(a.lastText !== undefined ? { lastText: a.lastText } : {}),
    ...(a.lastError !== undefined ? { lastError: a.lastError } : {}),
  };
}

/** Counts one effect really applied, inside an update. */
export function countIn(s: WorldState, effect: string): void {
  s.effects[effect] = (s.effects[effect] ?? 0) + 1;
}

/** Reads or changes one agent under the world's lock, with its turns brought up to now. */
export function withAgent<T>(
  world: World,
  ref: string,
  fn: (a: SimAgent | undefined, now: number, turnMs: number, s: WorldState) => T,
): T {
  const now = world.now();
  const turnMs = world.config().turnMs ?? DEFAULT_TURN_MS;
  let out: T | undefined;
  world.update((s) => {
    const a = s.agents?.[ref];
    if (a) advance(a, now);
    out = fn(a, now, turnMs, s);
  });
  return out as T;
}

export function agentRef(target: unknown): string {
  const a = (target as { agent?: { workstream?: string; name?: string } } | undefined)?.agent;
  return `${a?.workstream ?? "?"}/${a?.name ?? "?"}`;
}

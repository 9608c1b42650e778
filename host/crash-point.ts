import { closest } from "./closest.js";
import type { Ports } from "./ports/types.js";

// The testbed's fault hook. Each point is a named durable boundary in mu;
// when the environment variable MU_CRASH_AT names exactly that point, mu
// dies there through its ports' crash (in production a SIGKILL of itself;
// in the virtual engine the process leaves the table), so a scenario can
// prove what survives a crash at that moment (no handler, no flush, no
// cleanup runs, as with a power cut or the OOM killer). With MU_CRASH_AT
// unset or naming another point, crashPoint does nothing. Plugins never
// inherit MU_CRASH_AT. Add new points to CRASH_POINTS below and to docs/testbed.md's
// table.

/** Every crash point, each with the boundary it marks (docs/testbed.md's table lists the same). */
export const CRASH_POINTS = {
  /** The new database bytes are fsynced to their temp file, not yet renamed over. */
  "store.before-rename": true,
  /** A retention pass's archive segment is fsynced to its temp file, not yet renamed. */
  "archive.before-rename": true,
  /** The segment is in place; the database commit that vouches for it is not yet written. */
  "archive.written": true,
  /** An effect's intent is durable; its request is not yet written. */
  "effect.intent-durable": true,
  /** The effect's request is written to the plugin; no reply read yet. */
  "effect.request-written": true,
  /** The plugin's definite reply is read; the intent is not yet deleted. */
  "effect.reply-read": true,
  /** The intent is deleted and the outcome recorded. */
  "effect.intent-deleted": true,
  /** An agent's view pane is open; the agent's row does not name it yet. */
  "view.pane-opened": true,
  /** The agent's row names its view; readiness and the first prompt are not done yet. */
  "view.recorded": true,
  /** A close's collect is pinned under its ref and the job's record deleted; the tree is not yet removed. */
  "close.collected": true,
  /** A spawn that did not come up stopped its job, deleted its record and owed its tree's removal; the tree is not yet removed. */
  "spawn.dropped": true,
} as const;

export type CrashPointName = keyof typeof CRASH_POINTS;

/** Awaited, so a crash that cannot end the process at once (a virtual one) still stops it here. */
export async function crashPoint(name: CrashPointName, ports: Ports): Promise<void> {
  if (ports.env.MU_CRASH_AT === name) await ports.crash();
}

/** The line to warn with when MU_CRASH_AT names no crash point (it would never fire), else undefined. */
export function unknownCrashPoint(
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const at = env.MU_CRASH_AT;
  if (at === undefined || at === "" || Object.hasOwn(CRASH_POINTS, at)) return undefined;
  const near = closest(at, Object.keys(CRASH_POINTS));
  return `mu: testbed: MU_CRASH_AT='${at}' names no crash point, so mu will never stop there; did you mean '${near}'? (the points are listed in docs/testbed.md)\n`;
}

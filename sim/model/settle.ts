import type { LoadedScenario } from "../runner/scenario.js";
import { forgettable, keyCaps } from "./rules.js";
import type { ModelState } from "./state.js";

// forget checked against the rule table: a start or an acquire in doubt may
// be forgotten (exit 0) only when some row leaves it unsettled at the time
// the forget runs; where every row settles it, forget must refuse.

/**
 * How far the virtual time a step takes may run past its clock offset: its
 * own deadlines and held calls, a wait's timeout, the turns it waits on.
 */
const SLACK_MS = 300_000;
/** The longest a verb in doubt may still have been writing its intent after it began. */
const WRITE_MS = 70_000;

export function forgetDiverges(
  m: ModelState,
  s: LoadedScenario,
  words: string[],
  exit: number,
  now: number,
): string | undefined {
  if (exit !== 0 || words[1] !== "forget" || words.includes("--abandon")) return undefined;
  const seams = (s.world?.hello as { seams?: Record<string, Record<string, unknown>> } | undefined)
    ?.seams;
  const name = words[2] ?? "";
  let caps: ReturnType<typeof keyCaps>;
  let doubt: { first?: number; last?: number };
  if (words[0] === "host") {
    caps = keyCaps((seams?.host as { acquire?: unknown } | undefined)?.acquire);
    doubt = m.host(name).doubt;
  } else {
    // An at-start kind's start carries its first prompt and is never resent.
    if (s.world?.preset !== "link-job") return undefined;
    const job = seams?.job as { start?: unknown; handle?: string } | undefined;
    caps = keyCaps(job?.start, job?.handle === "file");
    doubt = m.agent(name).doubt;
  }
  const bounds = elapsedBounds(doubt, now);
  if (!bounds) return undefined;
  const [min, max] = bounds;
  if (forgettable(caps, min, max) === "maybe") return undefined;
  return `forgot ${name}, which the rule table settles under ${JSON.stringify(caps)} ${Math.round(min / 1000)}-${Math.round(max / 1000)} s after its intent`;
}

/** How long ago, at the least and at the most, a verb in doubt may have written its intent. */
export function elapsedBounds(
  doubt: { first?: number; last?: number },
  now: number,
): [number, number] | undefined {
  if (doubt.first === undefined || doubt.last === undefined) return undefined;
  return [Math.max(0, now - doubt.last - WRITE_MS), now - doubt.first + SLACK_MS];
}

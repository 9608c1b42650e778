import type { Intent } from "../effects/journal.js";
import type { InitializeResult, KeyCaps } from "../protocol/declaration.js";

// What resolves a job.start, in a module below both the rule table's job
// rules and the judgement of which starts no rule can settle, which each
// need it.

/** A start that carries the agent's first prompt (the job kind takes it at start). */
export const isAtStart = (i: Pick<Intent, "method" | "params">) =>
  i.method === "job.start" &&
  (i.params as { spec?: { firstPrompt?: unknown } }).spec?.firstPrompt !== undefined;

/** What a start is resolved by: an at-start one is never resent, so only a lookup can resolve it. */
export function startCaps(
  seams: InitializeResult["seams"],
  i: Pick<Intent, "method" | "params">,
): KeyCaps | undefined {
  const start = seams.job?.start;
  if (start && isAtStart(i) && !start.lookup) return undefined;
  return start;
}

import type { LoadedScenario } from "../runner/scenario.js";
import { forgettable, keyCaps, stuckThroughout } from "./rules.js";
import { elapsedBounds } from "./settle.js";
import type { ModelState } from "./state.js";

// What `mu state` names as the verb that settles each pending start or
// acquire. A start is settled by a spawn of its agent (which looks it up or
// resends it), by checking its first prompt, or, once no row of the rule
// table can settle it any more, by a person's forget; an acquire by the
// host's status, or by forget in the same case. Where the model's bounds on
// the time since the intent decide the row, the named verb must follow.

const LINE =
  /^pending: (job\.start|host\.acquire) for (agent|host):(\S+) \(key \S+\) since \S+; run: (.*)$/gm;

export function pendingVerbDiverges(
  m: ModelState,
  s: LoadedScenario,
  words: string[],
  exit: number,
  stdout: string,
  now: number,
): string | undefined {
  if (words[0] !== "state" || words.includes("--json") || exit !== 0) return undefined;
  const seams = (s.world?.hello as { seams?: Record<string, Record<string, unknown>> } | undefined)
    ?.seams;
  for (const [, method, kind, subject = "", next = ""] of stdout.matchAll(LINE)) {
    const name = kind === "agent" ? (subject.split("/")[1] ?? "") : subject;
    const [, group, verb = ""] = next.split(" ");
    if (
      method === "job.start" &&
      (group !== "agent" || !["spawn", "check", "forget"].includes(verb))
    )
      return `names '${next}' for ${name}'s pending start, which only a spawn, a check of its first prompt or forget settles`;
    // An at-start kind's start carries its first prompt and is never resent;
    // a machine may be released under a start: the model judges neither.
    if (method === "job.start" && s.world?.preset !== "link-job") continue;
    const job = seams?.job as { start?: unknown; handle?: string } | undefined;
    const caps =
      method === "job.start"
        ? keyCaps(job?.start, job?.handle === "file")
        : keyCaps((seams?.host as { acquire?: unknown } | undefined)?.acquire);
    const bounds = elapsedBounds(
      method === "job.start" ? m.agent(name).doubt : m.host(name).doubt,
      now,
    );
    if (!bounds) continue;
    const named = verb === "forget";
    if (named && forgettable(caps, ...bounds) === "never")
      return `names forget for ${name}, whose pending ${method} the rule table settles`;
    if (!named && stuckThroughout(caps, ...bounds))
      return `names '${next}' for ${name}'s pending ${method}, which no row of the rule table can settle any more: only forget ends it`;
  }
  return undefined;
}

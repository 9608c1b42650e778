import type { Answer } from "./job.js";
import { wholeChars } from "./utf8.js";

// A channel's state as the remote's JOBCTL reports it, and what a watch
// makes of it.

/** Bytes of a turn's final output kept as lastText. */
export const TEXT_CAP = 64 * 1024;

export interface State {
  cur: number;
  inc: number;
  runs: number;
  status: string;
  since: number;
  code?: number;
  text?: string;
  truncated?: boolean;
  err?: string;
  /** Who killed the turn, when it was killed on purpose: aborted or interrupted. */
  why?: string;
}

/** A state answer's fields and its turn's text; undefined for any other answer (no job, no such incarnation). */
export function parseState(r: Answer): State | undefined {
  if (r.tag !== "CH-STATE") return undefined;
  const [cur, i, runs, status, since, code, size, why] = r.fields;
  const s: State = {
    cur: Number(cur),
    inc: Number(i),
    runs: Number(runs),
    status: status === "busy" ? "busy" : status === "idle" ? "idle" : "unknown",
    since: Number(since),
  };
  if (code !== "-") {
    const text = r.raw.toString("latin1");
    const nl1 = text.indexOf("\n");
    const nl2 = text.indexOf("\n", nl1 + 1);
    s.code = Number(code);
    if (why === "aborted" || why === "interrupted") s.why = why;
    s.err = text.slice(nl1 + 1, nl2);
    s.truncated = Number(size) > TEXT_CAP;
    const kept = r.raw.subarray(nl2 + 1);
    s.text = new TextDecoder().decode(s.truncated ? wholeChars(kept) : kept);
  }
  return s;
}

/** What a watch reports of a state, against the runs it was opened after. */
export function observation(s: State, afterRuns: number): Record<string, unknown> {
  const o: Record<string, unknown> = {
    status: s.status,
    settled: s.runs > afterRuns,
    since: s.since,
    runs: s.runs,
    incarnation: s.inc,
  };
  if (s.text !== undefined) {
    o.lastText = s.text;
    if (s.truncated) o.lastTextTruncated = true;
  }
  if (s.why === "aborted") o.lastError = "aborted: mu agent abort killed the harness mid-turn";
  else if (s.why === "interrupted")
    o.lastError = "interrupted: the next message killed the harness mid-turn";
  else if (s.code !== undefined && s.code !== 0)
    o.lastError = `the harness exited ${s.code}${s.err ? `: ${s.err}` : ""}`;
  return o;
}

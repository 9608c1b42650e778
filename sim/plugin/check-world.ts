import { readFileSync } from "node:fs";
import { join } from "node:path";
import { PRESETS } from "./declaration.js";

// What the sim checks of its world before it answers anything, so that a
// mistake in a scenario or a walk-through shows as one line that names it,
// not as a Node stack trace after the first message.

const ACTIONS = [
  "delayMs",
  "loseHost",
  "hold",
  "error",
  "hang",
  "invalid",
  "replyTwice",
  "crash",
  "killMu",
  "ignoreEof",
  "ignoreShutdown",
  "setInstance",
  "advanceClockMs",
  "stderr",
  "splitReply",
  "setsidHelper",
  "leakCanary",
  "reply",
  "patchReply",
  "settleOnCancel",
  "restartChannel",
  "exitAfterMs",
  "groupHelper",
  "slowExitMs",
  "closeStdout",
  "closeStdin",
  "execIgnoresTimeout",
  "releaseErrorsWhenGone",
  "releaseOnlyOwn",
  "acquireIgnoresFence",
];

/** The first thing wrong with the world in `dir`, as one line, or null. */
export function worldProblem(dir: string): string | null {
  const file = join(dir, "world.json");
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? "error";
    return `cannot read ${file} (${code}); create it first, e.g. {"preset": "link-only"}`;
  }
  let c: unknown;
  try {
    c = JSON.parse(text);
  } catch (err) {
    return `${file} is not JSON: ${(err as Error).message}`;
  }
  if (typeof c !== "object" || c === null || Array.isArray(c)) return `${file} is not an object`;
  const { preset, faults } = c as { preset?: unknown; faults?: unknown };
  if (preset !== undefined && (typeof preset !== "string" || !(preset in PRESETS))) {
    return `${file}: unknown preset ${JSON.stringify(preset)}; one of: ${Object.keys(PRESETS).join(", ")}`;
  }
  if (faults === undefined) return null;
  if (!Array.isArray(faults)) return `${file}: faults is not a list`;
  for (const [i, f] of faults.entries()) {
    const where = `${file}: fault ${i + 1}`;
    if (typeof f !== "object" || f === null) return `${where} is not an object`;
    const { on, do: act, times } = f as { on?: unknown; do?: unknown; times?: unknown };
    if (typeof on !== "string") return `${where} names no method ("on")`;
    if (times !== undefined && times !== "once" && times !== "always") {
      return `${where}: times is ${JSON.stringify(times)}; once or always`;
    }
    if (typeof act !== "object" || act === null) return `${where} has no action ("do")`;
    const keys = Object.keys(act);
    // thenAnswer, splitAt, unended and at are no actions of their own: they
    // say how an invalid line, a stderr line or a leaked canary is written.
    const unknown = keys.filter(
      (k) =>
        !ACTIONS.includes(k) &&
        !(k === "thenAnswer" && "invalid" in act) &&
        !(k === "line" && (act as { invalid?: unknown }).invalid === "raw") &&
        !((k === "splitAt" || k === "unended") && "stderr" in act) &&
        !(k === "at" && (act as { leakCanary?: unknown }).leakCanary === "stderr"),
    );
    if (unknown.length > 0 || keys.length === 0) {
      return `${where}: unknown action ${JSON.stringify(unknown.join(", ") || "(none)")}; the actions: ${ACTIONS.join(", ")}`;
    }
    const split = splitProblem(act as { stderr?: unknown; splitAt?: unknown; unended?: unknown });
    if (split) return `${where}: ${split}`;
    const at = (act as { at?: unknown }).at;
    if (at !== undefined && !offsets(at))
      return `${where}: at is ${JSON.stringify(at)}; give the canary's character offsets, whole numbers from 0 to ${MAX_AT}, rising`;
    const raw = act as { invalid?: unknown; line?: unknown };
    if (raw.invalid === "raw" && (typeof raw.line !== "string" || raw.line.includes("\n")))
      return `${where}: a raw invalid line needs its line, one line of text without a newline`;
    const cut = (act as { splitReply?: unknown }).splitReply;
    if (cut !== undefined && !rising(cut, 1))
      return `${where}: splitReply is ${JSON.stringify(cut)}; give byte offsets into the answer's line, whole numbers from 1, rising`;
    const unended = (act as { unended?: unknown }).unended;
    if (unended !== undefined && unended !== true)
      return `${where}: unended is ${JSON.stringify(unended)}; it is true or left out`;
  }
  return null;
}

/** How far into its line a leaked canary may be put: a line's length is the sim's to bound. */
const MAX_AT = 100_000;

/** Whole numbers from `min`, each above the one before. */
function rising(at: unknown, min: number): boolean {
  return (
    Array.isArray(at) &&
    at.length > 0 &&
    at.every((n, i) => Number.isInteger(n) && n >= (i === 0 ? min : at[i - 1] + 1))
  );
}

function offsets(at: unknown): boolean {
  return rising(at, 0) && (at as number[]).every((n) => n <= MAX_AT);
}

/** splitAt must cut the stderr line (its newline included) at rising offsets inside it. */
function splitProblem(act: {
  stderr?: unknown;
  splitAt?: unknown;
  unended?: unknown;
}): string | null {
  if (act.splitAt === undefined) return null;
  const size = Buffer.byteLength(`${String(act.stderr)}${act.unended ? "" : "\n"}`);
  const at = act.splitAt;
  const rising =
    Array.isArray(at) &&
    at.every((n, i) => Number.isInteger(n) && n > (i === 0 ? 0 : at[i - 1]) && n < size);
  return rising
    ? null
    : `splitAt is ${JSON.stringify(at)}; give rising byte offsets between 1 and ${size - 1}, the line's bytes with its newline`;
}

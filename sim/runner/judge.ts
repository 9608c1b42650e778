import type { ProcessId } from "../../host/ports/types.js";
import type { Ran } from "./ran.js";
import { expand, type Places } from "./sandbox.js";
import type { DamageStep, MuStep, ShStep } from "./scenario.js";

// How a step's run is judged against what its scenario file asks. Both
// engines use these, so a step means the same on either.

/** Output patterns may name captured values (${var:NAME}) and sandbox paths too. */
export function expandPatterns(box: Places, step: MuStep): MuStep {
  return {
    ...step,
    ...(step.stdout !== undefined ? { stdout: expand(box, step.stdout) } : {}),
    ...(step.stderr !== undefined ? { stderr: expand(box, step.stderr) } : {}),
  };
}

/** Keeps each pattern's first group, from stdout then stderr, for later ${var:NAME}. */
export function capture(box: Places, want: Record<string, string> | undefined, r: Ran): string[] {
  const problems: string[] = [];
  for (const [name, pattern] of Object.entries(want ?? {})) {
    const m = new RegExp(pattern).exec(r.stdout) ?? new RegExp(pattern).exec(r.stderr);
    if (m?.[1] === undefined)
      problems.push(`nothing to capture as ${name}: /${pattern}/ did not match`);
    else box.vars[name] = m[1];
  }
  return problems;
}

/**
 * How much of a secret gives it away: a mask that missed it leaks some run
 * of its characters; CANARY_PIECE of them in a row, anywhere, is one.
 */
export const CANARY_PIECE = 12;
/**
 * A line cut inside a secret leaks its first characters. The canary's own
 * start (`canary-`) says nothing; one character more is its random part.
 */
const CANARY_START = 8;

/**
 * The canary itself if the text holds it, else the first part of it the
 * text holds: a run of CANARY_PIECE of its characters, or its first
 * CANARY_START or more.
 */
export function canaryPiece(canary: string, text: string): string | undefined {
  if (text.includes(canary)) return canary;
  for (let i = 0; i + CANARY_PIECE <= canary.length; i++) {
    const piece = canary.slice(i, i + CANARY_PIECE);
    if (text.includes(piece)) return piece;
  }
  const start = canary.slice(0, CANARY_START);
  return start.length === CANARY_START && text.includes(start) ? start : undefined;
}

/**
 * What a mu step's run got wrong. `asScenario` false is the explorer's
 * run, whose invariants judge the exit code and the canary themselves.
 * `env`: the step's; none of the plugin's MU_PLUGIN_CANARY may be in mu's
 * own messages (its `mu: ` lines on stderr, a plugin's stderr line and
 * error text quoted in them). The rest is left alone: `mu host exec` and
 * `mu agent read` pass on what a command or an agent wrote, as it was.
 */
export function checkMu(
  step: MuStep,
  r: Ran,
  asScenario = true,
  env: Readonly<Record<string, string | undefined>> = {},
): string[] {
  const problems: string[] = [];
  const canary = asScenario ? env.MU_PLUGIN_CANARY : undefined;
  const own = () => r.stderr.split("\n").filter((l) => l.startsWith("mu: "));
  const leaked = canary ? canaryPiece(canary, own().join("\n")) : undefined;
  if (leaked !== undefined)
    problems.push(
      `mu's own lines hold ${leaked === canary ? "the plugin's canary" : `part of the plugin's canary ('${leaked}')`}`,
    );
  if (asScenario && step.signalled !== undefined) {
    if (r.signal !== step.signalled)
      problems.push(`ended by ${r.signal ?? `exit ${r.exit}`}, expected ${step.signalled}`);
  } else if (asScenario) {
    const want = step.exit ?? 0;
    if (r.exit !== want) problems.push(`exit ${r.exit ?? r.signal}, expected ${want}`);
  }
  if (step.stdout !== undefined && !new RegExp(step.stdout).test(r.stdout)) {
    problems.push(
      `stdout does not match /${step.stdout}/: ${JSON.stringify(r.stdout.slice(0, 300))}`,
    );
  }
  if (step.stderr !== undefined && !new RegExp(step.stderr).test(r.stderr)) {
    problems.push(
      `stderr does not match /${step.stderr}/: ${JSON.stringify(r.stderr.slice(0, 300))}`,
    );
  }
  if (step.stderrLines !== undefined) {
    const lines = r.stderr === "" ? 0 : r.stderr.replace(/\n$/, "").split("\n").length;
    if (lines !== step.stderrLines)
      problems.push(`stderr has ${lines} lines, expected ${step.stderrLines}`);
  }
  return problems;
}

/** What an sh step's run got wrong. */
export function checkSh(step: ShStep, r: Ran): string[] {
  const problems: string[] = [];
  if (r.exit !== (step.exit ?? 0))
    problems.push(
      `exit ${r.exit ?? r.signal}, expected ${step.exit ?? 0}: ${r.stderr.slice(0, 300)}`,
    );
  if (step.stdout !== undefined && !new RegExp(step.stdout).test(r.stdout))
    problems.push(
      `stdout does not match /${step.stdout}/: ${JSON.stringify(r.stdout.slice(0, 300))}`,
    );
  return problems;
}

/**
 * A DB lock file's text naming `holder` as its own, as a mu holding the lock
 * writes it; a dead holder keeps the pid with a start time that pid never had.
 */
function lockHeldBy(holder: ProcessId, alive: boolean): string {
  return JSON.stringify({
    pid: holder.pid,
    start: alive ? holder.start : `not-${holder.start}`,
    token: "testbed",
  });
}

/**
 * What a damage step does to the DB's lock files, the same on either engine:
 * the file (its name's end beside the DB) and its new text, null to remove
 * it; undefined for a step about something else. `holder` is a process that
 * lives through the scenario, on the engine at hand.
 */
export function lockDamage(
  what: DamageStep["damage"],
  holder: ProcessId,
): { file: ".lock" | ".lock.break"; text: string | null } | undefined {
  if (what.lock === "removed") return { file: ".lock", text: null };
  if (what.lock) return { file: ".lock", text: lockHeldBy(holder, what.lock === "live") };
  if (what.lockBreak)
    return {
      file: ".lock.break",
      text: what.lockBreak === "unreadable" ? "" : lockHeldBy(holder, what.lockBreak === "live"),
    };
  if (what.lockText !== undefined) return { file: ".lock", text: what.lockText };
  return undefined;
}

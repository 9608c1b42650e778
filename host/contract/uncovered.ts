import type { Verdict } from "./verdict.js";

// What a run did not prove for this declaration, gathered after the count
// so that a clean count is not read as "conforms": the checks skipped, what
// passing lines say they left out, and the duties no check reaches.

/** Duties of protocol v1 that no check provokes, whatever the declaration. */
export const NEVER_CHECKED = [
  "human errors",
  "unknown-outcome",
  "a gone for a machine mu did not release, and a gone machine's jobs",
  "a fact left out of up that was meant to be cleared",
];

export function uncovered(vs: readonly Verdict[]): string[] {
  const skipped = vs.filter((v) => v.result === "skip").map((v) => v.id);
  const partial: string[] = [];
  for (const v of vs) {
    if (v.result !== "pass") continue;
    const left = /\(not exercised: ([^)]*)\)$/.exec(v.detail)?.[1];
    if (left) partial.push(`${v.id}: ${left}`);
    if (v.detail.startsWith("not provoked: ")) partial.push(`${v.id}: not provoked`);
  }
  return [
    ...(skipped.length > 0 ? [`not run: ${skipped.join(", ")} (each skip line says why)`] : []),
    ...(partial.length > 0 ? [`not exercised: ${partial.join("; ")}`] : []),
    `never checked: ${NEVER_CHECKED.join("; ")}`,
  ];
}

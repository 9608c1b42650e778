import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ExpectStep } from "./scenario.js";

// An expect step's look at the traces, the same patterns on both engines:
// the real engine reads the files the traced mu processes wrote, the
// virtual one hands over the lines its in-memory tap kept. A pattern is
// matched line by line, so one names one record.

export function checkTrace(
  lines: readonly string[],
  want: ExpectStep["expect"]["trace"],
): string[] {
  if (want === undefined) return [];
  // A trace nobody wrote lacks everything: that must not pass for a trace that kept nothing.
  if (lines.length === 0)
    return ["no step wrote a trace to look at: give the steps MU_TRACE_DIR in their env"];
  const problems: string[] = [];
  for (const p of want.holds ?? []) {
    const re = new RegExp(p);
    if (!lines.some((l) => re.test(l))) problems.push(`no line of the trace matches ${p}`);
  }
  for (const p of want.lacks ?? []) {
    const re = new RegExp(p);
    const hit = lines.find((l) => re.test(l));
    if (hit !== undefined) problems.push(`a line of the trace matches ${p}: ${hit}`);
  }
  return problems;
}

/** Where a real mu step writes its trace, if its environment asks for one. */
export function traceDirOf(env: Record<string, string>, cwd: string): string | undefined {
  return env.MU_TRACE_DIR ? resolve(cwd, env.MU_TRACE_DIR) : undefined;
}

/** Every line of every trace file in the directories, each directory's files in name order. */
export function readTraces(dirs: Iterable<string>): string[] {
  const lines: string[] = [];
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir).sort())
      if (f.endsWith(".ndjson"))
        lines.push(...readFileSync(join(dir, f), "utf8").split("\n").filter(Boolean));
  }
  return lines;
}

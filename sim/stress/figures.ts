import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { MuRun } from "./run-mu.js";

// The crew's figures: per verb how many ran, how many failed and how long
// they took; and the database lock, as the traces of every run noted it.

/** The q-th quantile (0..1) by nearest rank; NaN for none. */
export function quantile(xs: readonly number[], q: number): number {
  if (xs.length === 0) return Number.NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)] as number;
}

const ms = (x: number) => (Number.isNaN(x) ? "-" : `${Math.round(x)}`);

export function verbTable(runs: readonly MuRun[], seconds: number): string {
  const by = new Map<string, MuRun[]>();
  for (const r of runs) by.set(r.verb, [...(by.get(r.verb) ?? []), r]);
  const rows = [...by].sort(([a], [b]) => a.localeCompare(b));
  return [
    `${runs.length} mu runs in ${seconds} s: ${(runs.length / seconds).toFixed(1)} verbs/s`,
    "",
    "| verb | runs | exit 0 | p50 ms | p99 ms | max ms |",
    "|---|---|---|---|---|---|",
    ...rows.map(([verb, rs]) => {
      const t = rs.map((r) => r.ms);
      const ok = rs.filter((r) => r.code === 0).length;
      return `| ${verb} | ${rs.length} | ${ok} | ${ms(quantile(t, 0.5))} | ${ms(quantile(t, 0.99))} | ${ms(Math.max(...t))} |`;
    }),
  ].join("\n");
}

export interface LockFigures {
  /** Runs whose trace noted a wait for the lock. */
  waits: number[];
  /** Runs refused because the lock stayed held past its bound. */
  timeouts: number;
}

/** Every `lock-wait` record of every trace in dir. */
export function lockFigures(traceDir: string, runs: readonly MuRun[]): LockFigures {
  const waits: number[] = [];
  for (const f of readdirSync(traceDir)) {
    for (const line of readFileSync(join(traceDir, f), "utf8").split("\n")) {
      if (!line.includes('"lock-wait"')) continue;
      const r = JSON.parse(line) as { ms?: unknown };
      if (typeof r.ms === "number") waits.push(r.ms);
    }
  }
  const timeouts = runs.filter((r) => r.line.includes("the database lock")).length;
  return { waits, timeouts };
}

export function lockLine(l: LockFigures, runs: number): string {
  return (
    `lock: ${l.waits.length} of ${runs} runs waited for it (p50 ${ms(quantile(l.waits, 0.5))} ms, ` +
    `p99 ${ms(quantile(l.waits, 0.99))} ms, max ${ms(Math.max(0, ...l.waits))} ms); ` +
    `${l.timeouts} gave up past the bound`
  );
}

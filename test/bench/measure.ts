import { spawnSync } from "node:child_process";

/** The middle value (the upper one of an even count). */
export function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
}

export interface Sample {
  name: string;
  medianMs: number;
  minMs: number;
  runs: number;
}

export interface Command {
  name: string;
  argv: string[];
  env?: Record<string, string>;
}

/**
 * Runs the commands round-robin so a slow moment on a shared machine hits
 * every command alike, and reports medians: the ratios between commands of
 * one run are what the bench is for, not the absolute times.
 */
export function measure(commands: Command[], runs: number, warmup = 2): Sample[] {
  const times = commands.map(() => [] as number[]);
  for (let i = 0; i < warmup + runs; i++) {
    commands.forEach((c, k) => {
      const t0 = process.hrtime.bigint();
      const r = spawnSync(c.argv[0] as string, c.argv.slice(1), {
        env: { ...process.env, ...c.env },
        stdio: ["ignore", "ignore", "pipe"],
      });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r.status !== 0) {
        throw new Error(`${c.name} exited ${r.status}: ${r.stderr.toString().trim()}`);
      }
      if (i >= warmup) times[k]?.push(ms);
    });
  }
  return commands.map((c, k) => {
    const ts = times[k] ?? [];
    return {
      name: c.name,
      medianMs: median(ts),
      minMs: ts.length > 0 ? Math.min(...ts) : Number.NaN,
      runs: ts.length,
    };
  });
}

export function ratioTable(
  samples: Sample[],
  baseline: string,
  goals: Record<string, number>,
): string {
  const base = samples.find((s) => s.name === baseline);
  if (!base) throw new Error(`no baseline ${baseline}`);
  const rows = samples.map((s) => {
    const ratio = s.medianMs / base.medianMs;
    const goal = goals[s.name];
    const verdict =
      goal === undefined
        ? ""
        : ratio <= goal
          ? `ok (goal <= ${goal}x)`
          : `MISSED (goal <= ${goal}x)`;
    return `| ${s.name} | ${s.medianMs.toFixed(1)} | ${s.minMs.toFixed(1)} | ${ratio.toFixed(2)}x | ${verdict} |`;
  });
  return [
    `| command | median ms | min ms | vs ${baseline} | goal |`,
    "|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

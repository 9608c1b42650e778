import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";

/** The middle value (the upper one of an even count). */
export function median(xs: readonly number[]): number {
  return [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
}

export interface Sample {
  name: string;
  medianMs: number;
  minMs: number;
  /** Mean CPU time (user + system, the process and its children): load-proof. */
  cpuMs: number;
  runs: number;
}

const TICK_MS = 10; // USER_HZ is 100 on Linux

/**
 * CPU time of this process's reaped children so far (cutime + cstime of
 * /proc/self/stat). On a shared machine the wall times of a run swing with
 * everyone else's work; the CPU a command used hardly does.
 */
export function childrenCpuMs(): number {
  const stat = readFileSync("/proc/self/stat", "utf8");
  const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 16 and 17 of stat; f[0] is field 3.
  return (Number(f[13]) + Number(f[14])) * TICK_MS;
}

/**
 * The environment every measured command gets: PATH and HOME, as the
 * scenario runner gives mu. This process's own may carry what slows every
 * Node start and has nothing to do with mu: NODE_EXTRA_CA_CERTS makes each
 * start read a CA bundle, some 40 ms of CPU on the shared machine, which
 * added to the baseline and to mu alike flatters every ratio.
 */
export function cleanEnv(): Record<string, string> {
  return { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: process.env.HOME ?? "/" };
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
  const cpu = commands.map(() => 0);
  for (let i = 0; i < warmup + runs; i++) {
    commands.forEach((c, k) => {
      const c0 = childrenCpuMs();
      const t0 = process.hrtime.bigint();
      const r = spawnSync(c.argv[0] as string, c.argv.slice(1), {
        env: { ...cleanEnv(), ...c.env },
        stdio: ["ignore", "ignore", "pipe"],
      });
      const ms = Number(process.hrtime.bigint() - t0) / 1e6;
      if (r.status !== 0) {
        throw new Error(`${c.name} exited ${r.status}: ${r.stderr.toString().trim()}`);
      }
      if (i >= warmup) {
        times[k]?.push(ms);
        cpu[k] = (cpu[k] ?? 0) + childrenCpuMs() - c0;
      }
    });
  }
  return commands.map((c, k) => {
    const ts = times[k] ?? [];
    return {
      name: c.name,
      medianMs: median(ts),
      minMs: ts.length > 0 ? Math.min(...ts) : Number.NaN,
      cpuMs: ts.length > 0 ? (cpu[k] ?? 0) / ts.length : Number.NaN,
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
    const cpuRatio = s.cpuMs / base.cpuMs;
    return `| ${s.name} | ${s.medianMs.toFixed(1)} | ${s.minMs.toFixed(1)} | ${ratio.toFixed(2)}x | ${verdict} | ${s.cpuMs.toFixed(0)} | ${cpuRatio.toFixed(2)}x |`;
  });
  return [
    `| command | median ms | min ms | vs ${baseline} | goal | CPU ms (mean) | CPU vs ${baseline} |`,
    "|---|---|---|---|---|---|---|",
    ...rows,
  ].join("\n");
}

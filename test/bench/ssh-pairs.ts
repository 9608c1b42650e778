import { spawnSync } from "node:child_process";
import { median } from "./measure.js";
import type { SshWorld } from "./ssh-setup.js";

// Paired runs: each round times the bare command and mu's verb back to
// back, in alternating order, so a busy moment of the shared machine lands
// on both alike. What is reported is the ratio of the medians and the
// median of the per-round differences (mu's added milliseconds).

export interface Step {
  argv: string[];
  env?: Record<string, string>;
  cwd?: string;
}

export interface Pair {
  name: string;
  /** What the bare side does, in words, for the table. */
  bareIs: string;
  bare: (round: number) => Step[];
  mu: (round: number) => Step[];
  /** Untimed, before each round. */
  prep?: (round: number) => void;
  /** The goal, as a check on the medians; undefined for none. */
  goal?: { text: string; ok: (muMs: number, bareMs: number, addedMs: number) => boolean };
}

export interface PairResult {
  pair: Pair;
  muMs: number;
  bareMs: number;
  addedMs: number;
  rounds: number;
}

function timed(steps: Step[], w: SshWorld): number {
  const t0 = process.hrtime.bigint();
  for (const s of steps) {
    const r = spawnSync(s.argv[0] as string, s.argv.slice(1), {
      cwd: s.cwd ?? w.checkout,
      env: s.env ?? w.env,
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 170_000,
    });
    if (r.status !== 0)
      throw new Error(
        `${s.argv.slice(0, 6).join(" ")} exited ${r.status}: ${r.stderr.toString().trim()}`,
      );
  }
  return Number(process.hrtime.bigint() - t0) / 1e6;
}

export function runPair(p: Pair, rounds: number, w: SshWorld): PairResult {
  const mu: number[] = [];
  const bare: number[] = [];
  const added: number[] = [];
  for (let i = 0; i < rounds; i++) {
    p.prep?.(i);
    let b: number;
    let m: number;
    if (i % 2 === 0) {
      b = timed(p.bare(i), w);
      m = timed(p.mu(i), w);
    } else {
      m = timed(p.mu(i), w);
      b = timed(p.bare(i), w);
    }
    mu.push(m);
    bare.push(b);
    added.push(m - b);
  }
  return { pair: p, muMs: median(mu), bareMs: median(bare), addedMs: median(added), rounds };
}

export function pairTable(results: PairResult[]): string {
  return [
    "| mu verb | paired with (bare) | mu median | bare median | ratio | mu's added ms (median of pairs) | goal |",
    "|---|---|---|---|---|---|---|",
    ...results.map((r) => {
      const g = r.pair.goal;
      const verdict = g ? `${g.ok(r.muMs, r.bareMs, r.addedMs) ? "ok" : "MISSED"} (${g.text})` : "";
      return `| ${r.pair.name} | ${r.pair.bareIs} | ${r.muMs.toFixed(0)} ms | ${r.bareMs.toFixed(0)} ms | ${(r.muMs / r.bareMs).toFixed(2)}x | +${r.addedMs.toFixed(0)} ms | ${verdict} |`;
    }),
  ].join("\n");
}

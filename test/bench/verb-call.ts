import { spawnSync } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { cleanEnv, measure } from "./measure.js";
import { benchPlugin } from "./rpc.js";

const GOAL_MS = 60;

/**
 * mu's own cost around one plugin call: `mu host exec` through the bench
 * plugin against a bare script doing the same spawn, handshake, call and
 * stop. Both start a Node process and the plugin, so the difference is mu's
 * CLI, checks, store and stop sequence.
 */
export async function pluginVerbCost(dir: string, runs: number): Promise<string> {
  const root = packageRoot();
  const mu = join(root, "dist/host/cli/mu.cjs");
  const home = join(dir, "verb-call");
  mkdirSync(home, { recursive: true });
  const argv = benchPlugin(home);
  const env = { MU_STATE_DIR: join(home, "state") };
  const setup = [
    ["plugin", "add", "bench", "--", ...argv],
    ["host", "add", "h", "--plugin", "bench", "--fetch", "true"],
  ];
  for (const args of setup) {
    const r = spawnSync(process.execPath, [mu, ...args], { env: { ...cleanEnv(), ...env } });
    if (r.status !== 0) throw new Error(`mu ${args.join(" ")}: ${r.stderr.toString().trim()}`);
  }
  const [bare, viaMu] = measure(
    [
      { name: "bare", argv: [process.execPath, join(root, "test/bench/bare-call.mjs"), ...argv] },
      { name: "mu", argv: [process.execPath, mu, "host", "exec", "h", "--", "true"], env },
    ],
    runs,
  );
  if (!bare || !viaMu) throw new Error("no samples");
  const extra = viaMu.medianMs - bare.medianMs;
  const extraCpu = viaMu.cpuMs - bare.cpuMs;
  return [
    "A verb that calls a plugin, round-robin with its bare baseline, medians.",
    "",
    "| command | median ms | mu's own cost | goal | CPU ms (mean) | mu's own CPU |",
    "|---|---|---|---|---|---|",
    `| bare script: spawn, handshake, link.exec, stop (baseline) | ${bare.medianMs.toFixed(1)} | | | ${bare.cpuMs.toFixed(0)} | |`,
    `| mu host exec h -- true, same plugin | ${viaMu.medianMs.toFixed(1)} | +${extra.toFixed(0)} ms | ${extra <= GOAL_MS ? "ok" : "MISSED"} (goal <= +${GOAL_MS} ms) | ${viaMu.cpuMs.toFixed(0)} | +${extraCpu.toFixed(0)} ms |`,
  ].join("\n");
}

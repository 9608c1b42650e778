import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { runScenario } from "../../sim/runner/execute.js";
import { findScenarioFiles, loadScenario } from "../../sim/runner/load.js";
import { argv, type LoadedScenario } from "../../sim/runner/scenario.js";
import { cleanEnv, median } from "./measure.js";

// The runner's own cost: a scenario through the runner against the same mu
// commands run from a plain shell script, in the same run.

const q = (s: string) => `'${s.replace(/'/g, "'\\''")}'`;

/** The scenario's mu steps as a shell script, with its world and state laid out the same way. */
function asShell(s: LoadedScenario, root: string): string {
  const mu = join(packageRoot(), "dist/host/cli/mu.cjs");
  const sim = join(packageRoot(), "sim/bin/mu-plugin-sim");
  const lines = [`export HOME=${q(join(root, "home"))} MU_STATE_DIR=${q(join(root, "state"))}`];
  for (const step of s.steps) {
    if (!("mu" in step)) continue;
    const args = argv(step.mu).map((a) =>
      q(a.replace("$" + "{sim}", sim).replace("$" + "{world}", join(root, "world"))),
    );
    lines.push(`${q(process.execPath)} ${q(mu)} ${args.join(" ")} >/dev/null 2>&1 || true`);
  }
  return `${lines.join("\n")}\n`;
}

function shellOnce(s: LoadedScenario): number {
  const root = mkdtempSync(join(tmpdir(), "mu-bench-sh-"));
  try {
    mkdirSync(join(root, "home"));
    mkdirSync(join(root, "world"));
    writeFileSync(
      join(root, "world/world.json"),
      JSON.stringify({ preset: "link-only", instance: "sim-1", ...s.world }),
    );
    writeFileSync(join(root, "run.sh"), asShell(s, root));
    const t0 = process.hrtime.bigint();
    // The environment the runner gives mu (see cleanEnv).
    spawnSync("/bin/sh", [join(root, "run.sh")], { stdio: "ignore", env: cleanEnv() });
    return Number(process.hrtime.bigint() - t0) / 1e6;
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

export async function runnerOverhead(ids: string[], rounds: number) {
  const all = findScenarioFiles(join(packageRoot(), "scenarios")).map(loadScenario);
  const out: { id: string; runnerMs: number; shellMs: number }[] = [];
  for (const id of ids) {
    const s = all.find((x) => x.scenario === id);
    if (!s) throw new Error(`no scenario ${id}`);
    const runner: number[] = [];
    const shell: number[] = [];
    // One round first, not counted: the runner's first expectation loads
    // mu's modules and sql.js into this process once, which no later
    // scenario of a run pays again.
    await runScenario(s);
    shellOnce(s);
    for (let i = 0; i < rounds; i++) {
      const t0 = process.hrtime.bigint();
      const r = await runScenario(s);
      runner.push(Number(process.hrtime.bigint() - t0) / 1e6);
      if (!r.ok) throw new Error(`${id} failed in the bench: ${r.failure}`);
      shell.push(shellOnce(s));
    }
    out.push({ id, runnerMs: median(runner), shellMs: median(shell) });
  }
  return out;
}

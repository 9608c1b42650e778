import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { crewCommitAt } from "./crew-db.js";
import { median } from "./measure.js";
import { benchPlugin, handshakeToStopped, muCalls, rawEcho, spawnToExit } from "./rpc.js";
import { runnerOverhead } from "./scenarios.js";
import { sshReport } from "./ssh.js";
import { startupReport } from "./startup.js";
import { suiteWall } from "./suite.js";
import { commitAt, enginesCompared, explorerRate, longWaits, virtualSuite } from "./virtual.js";

// `npm run bench`: every number is a ratio against a baseline measured in
// the same run, so the report means the same on a busy machine as on an
// idle one. Nothing here fails a build; the goals are printed beside.

const runs = Number(process.env.MU_BENCH_RUNS ?? 15);
const root = packageRoot();
const state = mkdtempSync(join(tmpdir(), "mu-bench-"));

try {
  const startup = await startupReport(state, runs);
  // mu over a real ssh link; --quick (or MU_BENCH_SSH_ROUNDS) for few pairs under load.
  const sshRounds = Number(
    process.env.MU_BENCH_SSH_ROUNDS ?? (process.argv.includes("--quick") ? 3 : 9),
  );
  const sshPart =
    process.env.MU_BENCH_SSH === "0"
      ? "Not run (MU_BENCH_SSH=0)."
      : await sshReport(join(state, "ssh"), sshRounds);
  const calls = Number(process.env.MU_BENCH_CALLS ?? 2000);
  const argv = benchPlugin(state);
  // Alternate the two so a busy moment of the machine hits both alike.
  const raw: number[] = [];
  const viaMu: number[] = [];
  for (let round = 0; round < 3; round++) {
    raw.push(await rawEcho(calls));
    viaMu.push(await muCalls(argv, calls));
  }
  const rawMs = median(raw);
  const muMs = median(viaMu);
  const rpcRatio = muMs / rawMs;
  const stops = await handshakeToStopped(argv, runs);
  const bare = await spawnToExit(runs);
  const stopMs = median(stops);
  const bareMs = median(bare);
  const rpc = [
    "| measure | median | vs baseline | goal |",
    "|---|---|---|---|",
    `| raw pipe echo of a link.exec line (baseline) | ${(rawMs * 1000).toFixed(0)} us | 1.00x | |`,
    `| link.exec through mu's client (framing, schema check, ids, deadline timer) | ${(muMs * 1000).toFixed(0)} us | ${rpcRatio.toFixed(2)}x | ${rpcRatio <= 1.5 ? "ok" : "MISSED"} (goal <= 1.5x) |`,
    `| spawn node -e 0 to exit (baseline) | ${bareMs.toFixed(1)} ms | 1.00x | |`,
    `| plugin spawn, handshake, stop sequence, group empty | ${stopMs.toFixed(1)} ms | ${(stopMs / bareMs).toFixed(2)}x | ${stopMs - bareMs < 50 ? "ok" : "MISSED"} (goal: under 50 ms beyond the spawn, no grace wait) |`,
  ].join("\n");
  const picked = [
    "plugin/add-list-readd-rm",
    "host/acquire-status-release",
    "plugin/load-schema-digest",
  ];
  const over = await runnerOverhead(picked, Number(process.env.MU_BENCH_SCENARIO_ROUNDS ?? 3));
  const scen = [
    "| scenario | through the runner | same mu steps from sh | runner overhead | goal |",
    "|---|---|---|---|---|",
    ...over.map((o) => {
      const extra = o.runnerMs / o.shellMs - 1;
      return `| ${o.id} | ${o.runnerMs.toFixed(0)} ms | ${o.shellMs.toFixed(0)} ms | ${(extra * 100).toFixed(0)}% | ${extra < 0.1 ? "ok" : "MISSED"} (goal < 10%) |`;
    }),
  ].join("\n");
  // The last three wait out a grace, a read deadline and a wait's timeout:
  // seconds, so each mu step's fixed cost outweighs the wait.
  const compared = await enginesCompared([
    "plugin/add-list-readd-rm",
    "host/acquire-status-release",
    "host/dedupe-inside-window",
    "agent/spawn-and-close",
    "plugin/eof-ignored",
    "plugin/handshake-deadline",
    "channel/wait-timeout",
  ]);
  // The waiting scenarios the goal is about wait at a real crew's scale
  // (an hour's wait, half-hour turns, a plugin call of 25 minutes), which
  // only the virtual engine can afford (docs/decisions.md).
  const waits = await longWaits([
    "channel/wait-an-hour",
    "channel/wait-any-long-turns",
    "link/exec-long-script",
  ]);
  const suite = await virtualSuite();
  // Last, alone: it keeps both cores busy for about two minutes.
  const whole = process.env.MU_BENCH_SUITE === "0" ? undefined : await suiteWall();
  const exploreRuns = Number(process.env.MU_BENCH_EXPLORE_RUNS ?? 40);
  const rate = await explorerRate(exploreRuns);
  const rate2 = await explorerRate(exploreRuns, 2);
  const commits = [];
  for (const n of [100, 1_000, 10_000]) commits.push({ n, receipts: 0, ms: await commitAt(n) });
  // Every receipt here belongs to a live job, so retention may move none of them.
  commits.push({ n: 10_000, receipts: 100_000, ms: await commitAt(10_000, 100_000) });
  const crew = await crewCommitAt(100, 100, 10);
  const base = commits[0]?.ms ?? 1;
  const at1000 = commits.find((c) => c.n === 1_000 && c.receipts === 0)?.ms ?? 1;
  const engines = [
    "| scenario | real engine | virtual engine | virtual vs real | simulated time | simulated per wall second |",
    "|---|---|---|---|---|---|",
    ...compared.map(
      (c) =>
        `| ${c.id} | ${c.realMs.toFixed(0)} ms | ${c.virtualMs.toFixed(0)} ms | ${(c.realMs / c.virtualMs).toFixed(1)}x faster | ${c.simulatedMs.toFixed(0)} ms | ${(c.simulatedMs / c.virtualMs).toFixed(1)} |`,
    ),
    "",
    "The waiting scenarios (virtual engine only: the real one would take the hours they wait), the median of three runs:",
    "",
    ...waits.map(
      (c) =>
        `${c.id} waits: ${(c.simulatedMs / c.virtualMs).toFixed(0)} simulated seconds per wall second (${(c.simulatedMs / c.virtualMs / 1000).toFixed(2)}x the goal), ${c.simulatedMs / c.virtualMs >= 1000 ? "ok" : "MISSED"} (goal ≥ 1,000); ${(c.simulatedMs / 1000).toFixed(0)} s simulated over ${c.muSteps} mu step(s) and ${c.jumps} jump(s) of the clock in ${(c.virtualMs / 1000).toFixed(2)} s.`,
    ),
    "",
    `The virtual engine runs ${suite.count} of ${suite.files} scenario files (${(suite.count / 140).toFixed(2)}x the goal), ${suite.count >= 140 ? "ok" : "MISSED"} (goal ≥ 140): ${(suite.wallMs / 1000).toFixed(1)} s of wall time for ${(suite.simulatedMs / 1000).toFixed(1)} s of virtual time.`,
    "",
    `Explorer: ${rate.toFixed(1)} runs a second with one worker, ${rate2.toFixed(1)} with --workers 2 (${(rate2 / rate).toFixed(2)}x).`,
    "",
    "| jobs in the database | receipts | one intent's commit (write + durable persist) | vs 100 | goal |",
    "|---|---|---|---|---|",
    ...commits.map((c) => {
      const live = c.receipts > 0 ? " (all live: retention moves none)" : "";
      return `| ${c.n}${live} | ${c.receipts} | ${c.ms.toFixed(1)} ms | ${(c.ms / base).toFixed(2)}x | |`;
    }),
    `| ${crew.jobs} over a crew's life (${crew.live} live), after retention: ${crew.archived} receipts archived, ${(crew.hotBytes / 1024).toFixed(0)} KB left | ${crew.receipts} | ${crew.ms.toFixed(1)} ms | ${(crew.ms / base).toFixed(2)}x | ${crew.ms / at1000 <= 2 ? "ok" : "MISSED"} (${(crew.ms / at1000).toFixed(2)}x the 1,000-job commit; goal <= 2x) |`,
    "",
    `A commit that also runs a retention pass (at most hourly, at most 10,000 rows) took up to ${crew.passMs.toFixed(0)} ms while that crew's backlog drained.`,
  ].join("\n");
  // On a shared machine the wall time says more about the others' load; the
  // CPU the run used, spread over two cores, is what an idle 2-core machine
  // could do at best.
  const idle2 = whole ? whole.cpuMs / 2 : 0;
  const suiteLine = whole
    ? [
        `\`npm run scenarios\` (default --jobs, ${whole.cores} cores, load ${whole.load[0].toFixed(1)} before and ${whole.load[1].toFixed(1)} after): ${(whole.ms / 1000).toFixed(0)} s of wall time (${(whole.ms / 120_000).toFixed(2)}x the goal), ${whole.ms <= 120_000 && whole.ok ? "ok" : "MISSED"} (goal ≤ 120 s on 2 cores${whole.ok ? "" : `; the run failed: ${whole.last}`}).`,
        "",
        `It used ${(whole.cpuMs / 1000).toFixed(0)} s of CPU (the runner, every mu and every plugin): ${(idle2 / 1000).toFixed(0)} s on two idle cores at best (${(idle2 / 120_000).toFixed(2)}x the goal), ${idle2 <= 120_000 ? "ok" : "MISSED"}.`,
      ].join("\n")
    : "`npm run scenarios`: not timed (MU_BENCH_SUITE=0).";
  const report = `# mu bench\n\nStart-up, ${runs} runs each, round-robin, medians.\n\n${startup}\n\n## mu over ssh\n\n${sshPart}\n\n## Plugin calls\n\n${calls} sequential calls per round, 3 rounds alternating, medians.\n\n${rpc}\n\n## Scenario runner\n\nMedians of ${process.env.MU_BENCH_SCENARIO_ROUNDS ?? 3} rounds. The runner also checks each expectation (reading mu's records in-process) and looks for leftover processes.\n\n${scen}\n\n${suiteLine}\n\n## The virtual engine\n\nThe same scenario files on both engines (the real one run once, the virtual one the median of five); virtual time moves only when mu waits, so scenarios that wait out graces and windows gain the most.\n\n${engines}\n`;
  process.stdout.write(report);
  mkdirSync(join(root, "reports"), { recursive: true });
  writeFileSync(join(root, "reports/bench.md"), report);
} finally {
  rmSync(state, { recursive: true, force: true });
}

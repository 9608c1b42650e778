#!/usr/bin/env node
// First: the mutant under test must leave this process before mu's modules load.
import "./mutant-env.js";
import { availableParallelism } from "node:os";
import { join, resolve } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { parseOrUsage } from "../cli-args.js";
import { needsRealEngine } from "../virtual/can-run.js";
import { runScenario, type ScenarioResult } from "./execute.js";
import { findScenarioFiles, loadScenario, ScenarioFileError, selectFiles } from "./load.js";
import { longestFirst, writeTimings } from "./order.js";
import { progressLine, writeReports } from "./report.js";
import type { LoadedScenario } from "./scenario.js";
import { whyNotViaProxy } from "./via-proxy.js";

// npm run scenarios [-- --filter PATTERN] [--repeat N] [--jobs N] [--reports DIR] [--virtual] [--via-proxy] [id-part…]
// (--jobs: three times the cores by default)
// Runs scenario files against the built mu, writes reports, exits 0 only
// when every run passed.

// Much of a scenario's wall time is mu waiting (a grace, a deadline, a
// script's sleep, a turn), the rest Node starts: three files a core keep the
// cores busy while some of them wait (the suite uses about 225 s of CPU on
// a 2-core machine; at twice the cores it took 149 s of wall time idle).
const defaultJobs = 3 * availableParallelism();

const { values, positionals } = parseOrUsage(
  "scenarios",
  "usage: npm run scenarios -- [--filter PATTERN] [--repeat N] [--jobs N] [--reports DIR] [--virtual] [--via-proxy] [id-part...]",
  {
    filter: { type: "string" },
    repeat: { type: "string", default: "1" },
    jobs: { type: "string", default: String(defaultJobs) },
    reports: { type: "string" },
    virtual: { type: "boolean" },
    "via-proxy": { type: "boolean" },
  },
  true,
  {
    filter: [
      "PATTERN",
      "run only the files whose id contains PATTERN; a comma list or bare words after the flags match any of them (default: every file)",
    ],
    repeat: ["N", "run each file N times"],
    jobs: ["N", "files run at once, longest first (three times the cores)"],
    reports: ["DIR", "where each run's folder and latest go (default: reports/ in the checkout)"],
    virtual:
      "run the files on the virtual engine, skipping (with the reason) those only real processes can run (default: off, the real engine)",
    "via-proxy":
      "put the fault proxy in front of the sim in every file that allows it (default: off)",
  },
);
const virtual = values.virtual === true;
const viaProxy = values["via-proxy"] === true;
const root = packageRoot();
const reports = resolve(values.reports ?? join(root, "reports"));
const repeat = Number(values.repeat);
const jobs = Number(values.jobs);
const tty = process.stdout.isTTY === true;

async function main(): Promise<number> {
  if (!Number.isInteger(repeat) || repeat < 1 || !Number.isInteger(jobs) || jobs < 1) {
    process.stderr.write("scenarios: --repeat and --jobs take a whole number of at least 1\n");
    return 2;
  }
  let picked: LoadedScenario[] = [];
  const bad: string[] = [];
  const parts = [...positionals, ...(values.filter ? [values.filter] : [])]
    .flatMap((p) => p.split(","))
    .filter(Boolean);
  for (const f of selectFiles(findScenarioFiles(join(root, "scenarios")), parts)) {
    try {
      picked.push(loadScenario(f));
    } catch (err) {
      if (!(err instanceof ScenarioFileError)) throw err;
      bad.push(err.message);
    }
  }
  // A bad scenario file is reported, never run; every bad one at once.
  if (bad.length > 0) {
    for (const b of bad) process.stderr.write(`scenarios: ${b}\n`);
    return 2;
  }
  const matched = picked.length;
  if (virtual) {
    for (const s of picked) {
      const why = needsRealEngine(s);
      if (why) process.stdout.write(`skip  ${s.scenario}  (needs the real engine: ${why})\n`);
    }
    picked = picked.filter((s) => needsRealEngine(s) === undefined);
  }
  if (viaProxy) {
    for (const s of picked) {
      const why = whyNotViaProxy(s);
      if (why) process.stdout.write(`skip  ${s.scenario}  (${why})\n`);
    }
    picked = picked.filter((s) => whyNotViaProxy(s) === undefined);
  }
  const queue = longestFirst(picked, reports).flatMap((s) =>
    Array.from({ length: repeat }, () => s),
  );
  if (queue.length === 0) {
    const what = `${positionals.join(" ")} ${values.filter ?? ""}`.trim();
    process.stderr.write(
      matched > 0
        ? `scenarios: every file that matches ${what} was skipped (see above); nothing ran\n`
        : `scenarios: nothing matches ${what}\n`,
    );
    return 2;
  }
  const results: ScenarioResult[] = [];
  const running = new Set<string>();
  const progress = () => {
    if (!tty) return;
    const failed = results.filter((r) => !r.ok).length;
    process.stdout.write(`\r\x1b[K${progressLine(results.length, queue.length, failed, running)}`);
  };
  let next = 0;
  const worker = async () => {
    while (next < queue.length) {
      const s = queue[next++] as LoadedScenario;
      running.add(s.scenario);
      progress();
      const r = await runScenario(s, { viaProxy, virtual });
      running.delete(s.scenario);
      results.push(r);
      if (tty) process.stdout.write("\r\x1b[K");
      process.stdout.write(`${r.ok ? "pass" : "FAIL"}  ${s.scenario}  (${r.ms} ms)\n`);
      if (!r.ok) process.stdout.write(`      ${r.failure}\n`);
      progress();
    }
  };
  await Promise.all(Array.from({ length: Math.min(jobs, queue.length) }, worker));
  if (tty) process.stdout.write("\r\x1b[K");
  results.sort((a, b) => a.scenario.scenario.localeCompare(b.scenario.scenario));
  const dir = writeReports(reports, results, parts.length > 0);
  writeTimings(reports, dir, results);
  const failed = results.filter((r) => !r.ok);
  for (const r of failed)
    process.stdout.write(
      `failed: ${r.scenario.scenario}: ${r.virtual ? "report" : "transcript"} ${join(dir, r.scenario.scenario, r.virtual ? "sequence.md" : "transcript.ndjson")}\n`,
    );
  process.stdout.write(`\nreport: ${join(dir, "summary.md")}\n`);
  process.stdout.write(
    `scenarios: ${results.length - failed.length} passed, ${failed.length} failed\n`,
  );
  return failed.length === 0 ? 0 : 1;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`scenarios: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exitCode = 2;
  },
);

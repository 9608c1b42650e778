#!/usr/bin/env node
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { packageRoot } from "../../host/package-root.js";
import { runScenario, type ScenarioResult } from "./execute.js";
import { findScenarioFiles, loadScenario, ScenarioFileError } from "./load.js";
import { writeReports } from "./report.js";

// `npm run scenarios [-- <id-substring>…] [--reports DIR]`: runs every
// scenario file against the built mu, writes reports, exits 0 only when all
// passed.

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { reports: { type: "string" } },
});
const root = packageRoot();
const reports = resolve(values.reports ?? join(root, "reports"));

async function main(): Promise<number> {
  const files = findScenarioFiles(join(root, "scenarios"));
  const scenarios = [];
  for (const f of files) {
    try {
      scenarios.push(loadScenario(f));
    } catch (err) {
      if (err instanceof ScenarioFileError) {
        process.stderr.write(`scenarios: ${err.message}\n`);
        return 2;
      }
      throw err;
    }
  }
  const chosen = scenarios.filter(
    (s) => positionals.length === 0 || positionals.some((p) => s.scenario.includes(p)),
  );
  if (chosen.length === 0) {
    process.stderr.write(`scenarios: nothing matches ${positionals.join(" ")}\n`);
    return 2;
  }
  const results: ScenarioResult[] = [];
  for (const s of chosen) {
    const r = await runScenario(s);
    results.push(r);
    process.stdout.write(
      `${r.ok ? "pass" : "FAIL"}  ${s.scenario}${r.ok ? "" : `\n      ${r.failure}`}\n`,
    );
  }
  const dir = writeReports(reports, results);
  const failed = results.filter((r) => !r.ok).length;
  process.stdout.write(`\nreport: ${join(dir, "summary.md")}\n`);
  process.stdout.write(`scenarios: ${results.length - failed} passed, ${failed} failed\n`);
  return failed === 0 ? 0 : 1;
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

#!/usr/bin/env node
// Runs again, outside Stryker, each mutant a recorded run left undetected:
// the mutant is written into a copy of the sources, and the same test set
// Stryker ran (vitest.mutate.config.ts: the scenario files on the virtual
// engine and the short explorer run) runs whole, in a fresh process.
//
//   node scripts/mutation-recheck.mjs reports/mutation-runs/RUN.json [--file PATH]... [--ids ID,ID...] [--first SCENARIO,...] [--workers N] [--keep NAME]
//
// --ids picks mutants by the run's ids: to prove that a scenario written for
// a survivor kills it, rather than applying the mutant by hand.
//
// Why: under `perTest` coverage Stryker runs only the tests that reached a
// mutant, inside a test process that already loaded the module. A mutant in
// code that runs once, when the module loads (a property of a module-level
// object, a constant), was never in force in that process, and a test that
// reached a mutant only through another test's leftovers was never run for it;
// both read "Survived" whatever the testbed would do. Here each mutant is in
// force from the first line. A mutant counts as killed when a test fails,
// as timed out when the run outlives its limit (Stryker's rule), as an error
// when the copy does not load at all.
//
// The recorded source must equal today's file: a mutant's place is only
// meaningful in the text it was made from. The result, with `--keep NAME`,
// is a compact run in reports/mutation-runs/ that scripts/mutation-summary.mjs
// merges after the Stryker run it rechecks.
import { spawn, spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";

const root = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..");
const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const at = args.indexOf(name);
  return at === -1 ? fallback : args.splice(at, 2)[1];
};
// --file may be given more than once; without it, every file of the run.
const onlyFiles = [];
for (let f = opt("--file", undefined); f !== undefined; f = opt("--file", undefined)) onlyFiles.push(f);
const wanted = (path) => onlyFiles.length === 0 || onlyFiles.includes(path);
const ids = opt("--ids", undefined)?.split(",").filter(Boolean);
const workers = Number(opt("--workers", 2));
const keep = opt("--keep", undefined);
const limitMs = Number(opt("--limit-ms", 300_000));
// Scenario ids run first (test/mutation/testbed.mutate.ts reads MU_MUTATE_FIRST):
// the scenarios written to kill these mutants. Order only, never the verdict:
// a mutant they do not kill still meets the whole test set.
// A file's path names its scenario too: scenarios/link/x.yaml is link/x.
const first = opt("--first", undefined)
  ?.split(",")
  .map((f) => f.replace(/^(\.\/)?scenarios\//, "").replace(/\.ya?ml$/, ""))
  .join(",");
const [runFile] = args;
const help = runFile === "-h" || runFile === "--help";
if (help || !runFile || !existsSync(runFile) || !Number.isInteger(workers) || workers < 1) {
  (help ? process.stdout : process.stderr).write(
    "usage: node scripts/mutation-recheck.mjs RUN.json [--file PATH]... [--ids ID,ID...] [--first SCENARIO,...] [--workers N] [--keep NAME] [--limit-ms MS]\n",
  );
  process.exit(help ? 0 : 2);
}

const run = JSON.parse(readFileSync(runFile, "utf8"));
// The real part's files are killed by real processes, which this test set never starts.
const realPart = (await import(join(root, "stryker.real.config.mjs"))).default.mutate ?? [];
const todo = [];
for (const [path, entry] of Object.entries(run.files)) {
  if (!wanted(path)) continue;
  if (realPart.includes(path)) {
    process.stderr.write(`recheck: ${path} is the real part's (stryker.real.config.mjs); leave it out with --file\n`);
    process.exit(2);
  }
  const now = readFileSync(join(root, path), "utf8");
  if (now !== entry.source) {
    process.stderr.write(`recheck: ${path} changed since ${basename(runFile)} was recorded; run Stryker on it again\n`);
    process.exit(1);
  }
  for (const m of entry.mutants) {
    if (ids !== undefined && !ids.includes(String(m.id))) continue;
    if (m.status === "Survived" || m.status === "NoCoverage") todo.push({ path, entry, m });
  }
}
process.stderr.write(`recheck: ${todo.length} undetected mutant(s), ${workers} worker(s)\n`);

/** The source with one mutant written in: Stryker's lines count from 1, its columns too. */
function applyMutant(source, m) {
  const lines = source.split("\n");
  const offset = (p) => lines.slice(0, p.line - 1).reduce((n, l) => n + l.length + 1, 0) + p.column - 1;
  return source.slice(0, offset(m.location.start)) + m.replacement + source.slice(offset(m.location.end));
}

/** A copy of what the test set reads, node_modules shared: each worker mutates its own. */
function makeCopy(dir) {
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  const tracked = spawnSync("git", ["ls-files"], { cwd: root, encoding: "utf8" }).stdout.split("\n");
  for (const f of tracked.filter(Boolean)) {
    if (!existsSync(join(root, f))) continue;
    mkdirSync(dirname(join(dir, f)), { recursive: true });
    cpSync(join(root, f), join(dir, f));
  }
  symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));
}

/** Runs the test set in `dir`: killed, timeout or error, or survived. */
function testSet(dir) {
  return new Promise((resolve) => {
    const out = join(dir, "recheck-result.json");
    rmSync(out, { force: true });
    const child = spawn(
      process.execPath,
      [join(root, "node_modules/vitest/vitest.mjs"), "run", "-c", "vitest.mutate.config.ts", "--bail", "1",
        "--reporter", "json", "--outputFile", out],
      {
        cwd: dir,
        stdio: "ignore",
        detached: true,
        env: first === undefined ? process.env : { ...process.env, MU_MUTATE_FIRST: first },
      },
    );
    const timer = setTimeout(() => {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {}
      resolve("Timeout");
    }, limitMs);
    child.on("exit", () => {
      clearTimeout(timer);
      if (!existsSync(out)) return resolve("RuntimeError");
      const r = JSON.parse(readFileSync(out, "utf8"));
      if (r.numFailedTests > 0) return resolve("Killed");
      // A suite that failed with no test failing did not load: not a verdict on the testbed.
      if (r.numFailedTestSuites > 0 || r.numTotalTests === 0) return resolve("RuntimeError");
      resolve("Survived");
    });
  });
}

/**
 * Writes what has been rechecked so far as a compact run (only the mutants
 * run: the merge keeps the earlier run's result for the rest), after each
 * mutant, so a recheck cut short still leaves its verdicts.
 */
function keepNow() {
  const compact = { files: {} };
  for (const [path, entry] of Object.entries(run.files)) {
    if (!wanted(path)) continue;
    compact.files[path] = {
      source: entry.source,
      mutants: entry.mutants
        .filter((m) => results.has(m))
        .map((m) => ({ ...m, status: results.get(m) === "RuntimeError" ? m.status : results.get(m) })),
    };
  }
  const to = join(root, "reports", "mutation-runs", `${basename(keep, ".json")}.json`);
  writeFileSync(to, `${JSON.stringify(compact)}\n`);
  return to;
}

const results = new Map();
let next = 0;
let done = 0;
async function worker(k) {
  // Outside .stryker-tmp, which a Stryker run wipes when it ends, and named
  // by pid, so two rechecks at once never share a copy.
  const dir = join(tmpdir(), `mu-recheck-${process.pid}-${k}`);
  makeCopy(dir);
  for (;;) {
    const job = todo[next++];
    if (!job) break;
    const file = join(dir, job.path);
    writeFileSync(file, applyMutant(job.entry.source, job.m));
    const status = await testSet(dir);
    writeFileSync(file, job.entry.source);
    results.set(job.m, status);
    if (keep !== undefined) keepNow();
    done++;
    const line = job.entry.source.split("\n")[job.m.location.start.line - 1]?.trim().slice(0, 70);
    process.stderr.write(
      `[${done}/${todo.length}] ${status.padEnd(12)} ${job.path}:${job.m.location.start.line} ${job.m.mutatorName} | ${line}\n`,
    );
  }
  rmSync(dir, { recursive: true, force: true });
}
await Promise.all(Array.from({ length: Math.min(workers, todo.length) }, (_, k) => worker(k)));

const tally = {};
for (const s of results.values()) tally[s] = (tally[s] ?? 0) + 1;
process.stdout.write(`${JSON.stringify(tally)}\n`);
if (keep !== undefined) process.stderr.write(`recheck: kept ${keepNow()}\n`);

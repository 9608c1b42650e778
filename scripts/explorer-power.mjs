#!/usr/bin/env node
// npm run explore:power -- [--mutants FILE] [--runs N] [--workers W] [--only I,J] [--races NAMES] [--json FILE]
//
// How many of a list of mutants the explorer kills by itself. Each mutant
// (a file of host/, a text in it, its replacement) is written into a copy
// of the built tree: the mutated module alone is compiled again (tsc's
// transpile, with the project's options) over tsc's own output for it, and
// then only the explorer runs, for N seeds from 1, unshrunk (drawing only the
// concurrent races --races names, as explore's option does). A run that
// breaks an invariant or leaves the model's bounds kills the mutant; one
// that holds over every seed lets it survive. The copy is removed at the end.
import { spawnSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import ts from "typescript";

const root = join(import.meta.dirname, "..");
const { values } = parseArgs({
  options: {
    mutants: { type: "string", default: join(root, "test/mutation/explorer-mutants.json") },
    runs: { type: "string", default: "100" },
    workers: { type: "string", default: "1" },
    only: { type: "string" },
    races: { type: "string" },
    json: { type: "string" },
  },
});
const runs = Number(values.runs);
const workers = Number(values.workers);
const list = JSON.parse(readFileSync(values.mutants, "utf8"));
const only = values.only?.split(",").map(Number);
const tsconfig = ts.readConfigFile(join(root, "tsconfig.json"), ts.sys.readFile).config;
const { options } = ts.convertCompilerOptionsFromJson(tsconfig.compilerOptions, root);

const dir = join(tmpdir(), `mu-explorer-power-${process.pid}`);
rmSync(dir, { recursive: true, force: true });
mkdirSync(dir, { recursive: true });
cpSync(join(root, "dist"), join(dir, "dist"), { recursive: true });
for (const f of ["package.json", "schemas"]) cpSync(join(root, f), join(dir, f), { recursive: true });
symlinkSync(join(root, "node_modules"), join(dir, "node_modules"));

const resultFile = join(dir, "explore-result.json");

/** The explorer over the copy: killed (with the first broken line and its seed) or survived. */
function explore() {
  const out = join(dir, "found");
  rmSync(resultFile, { force: true });
  const r = spawnSync(
    process.execPath,
    [join(dir, "dist/sim/virtual/explore-main.js"), "--runs", String(runs), "--workers", String(workers), "--no-shrink", "--out", out, "--json", resultFile, ...(values.races ? ["--races", values.races] : [])],
    { encoding: "utf8", cwd: dir, maxBuffer: 64 << 20 },
  );
  const m = /explore: seed (\d+) breaks an invariant: (.*)/.exec(r.stdout);
  const held = /explore: (\d+) runs? from seed/.exec(r.stdout);
  if (r.status === 0 && Number(held?.[1]) === runs) return { verdict: "survived" };
  if (r.status === 1 && m) {
    // The invariants one by one, as the explorer kept them (a model line may hold "; ").
    let each = [m[2]];
    try {
      each = JSON.parse(readFileSync(resultFile, "utf8")).finding?.broken ?? each;
    } catch {
      // no result file: judge the printed line whole
    }
    return { verdict: "killed", seed: Number(m[1]), broken: m[2], each };
  }
  return { verdict: "error", broken: `${r.stdout}${r.stderr}`.trim().split("\n").slice(-3).join(" | ") };
}

const results = [];
for (const [i, m] of list.entries()) {
  if (only && !only.includes(i)) continue;
  const src = readFileSync(join(root, m.file), "utf8");
  const at = src.indexOf(m.original);
  if (at < 0 || src.indexOf(m.original, at + 1) >= 0) {
    results.push({ i, ...m, verdict: "stale" });
    process.stdout.write(`${i}\t${m.file}\tstale: the text is not in the file exactly once\n`);
    continue;
  }
  const mutated = src.slice(0, at) + m.replacement + src.slice(at + m.original.length);
  const js = join(dir, "dist", m.file.replace(/\.ts$/, ".js"));
  const before = readFileSync(js);
  const out = ts.transpileModule(mutated, { compilerOptions: { ...options, sourceMap: false, module: ts.ModuleKind.ES2022 }, fileName: m.file });
  writeFileSync(js, out.outputText);
  const t0 = Date.now();
  const r = explore();
  writeFileSync(js, before);
  const secs = Math.round((Date.now() - t0) / 1000);
  // Killed by the model alone: every invariant it broke is the model's.
  const byModel = r.verdict === "killed" && r.each.every((l) => l.endsWith("(the model)"));
  const { each: _each, ...kept } = r;
  results.push({ i, file: m.file, why: m.why, ...kept, byModel, secs });
  process.stdout.write(
    `${i}\t${m.file}\t${r.verdict}${r.seed ? ` at seed ${r.seed}` : ""}${byModel ? " (by the model alone)" : ""}\t${secs} s\t${r.broken ?? ""}\n`,
  );
}
rmSync(dir, { recursive: true, force: true });
const judged = results.filter((r) => r.verdict === "killed" || r.verdict === "survived");
const killed = judged.filter((r) => r.verdict === "killed");
const summary = {
  runs,
  workers,
  mutants: results.length,
  judged: judged.length,
  killed: killed.length,
  killedByModel: killed.filter((r) => r.byModel).length,
};
process.stdout.write(
  `explorer-power: ${summary.killed} of ${summary.judged} mutants killed in ${runs} seeds (${summary.killedByModel} by the model alone)\n`,
);
if (values.json) writeFileSync(values.json, `${JSON.stringify({ summary, results }, null, 2)}\n`);

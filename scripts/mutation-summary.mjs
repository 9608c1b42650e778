#!/usr/bin/env node
// Turns one or more Stryker JSON reports (a whole `npm run mutate`, or the
// parts of a run split by --mutate) into a short markdown summary: the score
// per file, the survivors counted by mutator, and each survivor with its line,
// so a reader can judge which are real testbed gaps and which are equivalent.
//
//   node scripts/mutation-summary.mjs reports/mutation/mutation.json [more.json...] > summary.md
//
// A report may be Stryker's own or the compact copy `--keep` writes to
// reports/mutation-runs/ (kept in git, so a recorded score can be merged
// again later). test/mutation/equivalent/*.json list the survivors judged
// equivalent by reading, each with its reason; they are left out of the
// behaviour-changing score, never out of Stryker's own.
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { basename, dirname, join } from "node:path";
import { carryInto, toCurrent } from "./mutation-lines.mjs";

const root = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..");
const argv = process.argv.slice(2);
const keepAt = argv.indexOf("--keep");
const keepName = keepAt === -1 ? undefined : argv.splice(keepAt, 2)[1];
// --unmeasured: also list every module of host/ and the ssh plugin that no
// given report covers, so the table never reads as the whole of mu.
const unmeasuredAt = argv.indexOf("--unmeasured");
const unmeasured = unmeasuredAt !== -1 && argv.splice(unmeasuredAt, 1).length > 0;
// --current: measure each file against its text today. Mutants on lines
// unchanged since their run keep their result; the rest are counted stale,
// and the line ranges a run must cover are listed (scripts/mutation-lines.mjs).
// Without it, a row is as its last run left it (stale mutants of earlier
// runs that a later run over some lines did not reach are counted all the same).
const currentAt = argv.indexOf("--current");
const current = currentAt !== -1 && argv.splice(currentAt, 1).length > 0;
const files = argv;
const usage =
  "usage: node scripts/mutation-summary.mjs REPORT.json... [--current] [--unmeasured] [--keep NAME]\n";
if (files.length === 0 || files.some((f) => f === "--help" || f === "-h")) {
  process.stderr.write(usage);
  process.exit(files.length === 0 ? 2 : 0);
}
const unknown = files.find((f) => f.startsWith("-"));
const missing = files.find((f) => !f.startsWith("-") && !existsSync(f));
if (unknown || missing) {
  process.stderr.write(
    unknown
      ? `mutation-summary: unknown option ${unknown}\n${usage}`
      : `mutation-summary: no report at ${missing}; kept runs are in reports/mutation-runs/\n`,
  );
  process.exit(2);
}

const DETECTED = new Set(["Killed", "Timeout"]);

/** The survivor as the list below prints it: also the key an equivalence judgement names. */
function printed(entry, m) {
  const lines = entry.source.split("\n");
  const at = m.location.start.line;
  const src = (lines[at - 1] ?? "").trim().slice(0, 90).replaceAll("`", "'");
  const repl = String(m.replacement ?? "").replace(/\s+/g, " ").slice(0, 60).replaceAll("`", "'");
  return { at, src, repl };
}

const judgedDir = join(root, "test/mutation/equivalent");
const judged = existsSync(judgedDir)
  ? readdirSync(judgedDir)
      .filter((f) => f.endsWith(".json"))
      .flatMap((f) => JSON.parse(readFileSync(join(judgedDir, f), "utf8")))
  : [];
const judgedKey = (file, mutator, src, repl) => `${file}\u0000${mutator}\u0000${src}\u0000${repl}`;
// A judgement names a survivor as the list prints it, which two mutants of
// one line can share: each judgement counts for one survivor, never more.
const judgements = new Map();
for (const j of judged) {
  const k = judgedKey(j.file, j.mutator, j.line, j.replacement);
  judgements.set(k, (judgements.get(k) ?? 0) + 1);
}
let judgedMutants;
const isEquivalent = (m) => judgedMutants.has(m);
function matchJudgements() {
  judgedMutants = new Set();
  const left = new Map(judgements);
  for (const [path, entry] of [...byFile.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    // Only what Stryker counts against the score: a survivor or a mutant no test reaches.
    const open = entry.mutants
      .filter((m) => m.status === "Survived" || m.status === "NoCoverage")
      .sort((a, b) => a.location.start.line - b.location.start.line || a.location.start.column - b.location.start.column);
    for (const m of open) {
      const p = printed(entry, m);
      const k = judgedKey(path, m.mutatorName, p.src, p.repl);
      if ((left.get(k) ?? 0) > 0) {
        left.set(k, left.get(k) - 1);
        judgedMutants.add(m);
      }
    }
  }
}
/**
 * The line ranges a run was limited to, per file (Stryker's `file:from-to`
 * mutate patterns, which its report keeps in `config`; a compact run keeps
 * them per file). A file some pattern names whole is not limited.
 */
function rangesOf(patterns) {
  const out = new Map();
  const whole = new Set();
  for (const p of Array.isArray(patterns) ? patterns : []) {
    const m = /^(.*?):(\d+)(?::\d+)?-(\d+)(?::\d+)?$/.exec(p);
    if (!m) whole.add(p);
    else out.set(m[1], [...(out.get(m[1]) ?? []), [Number(m[2]), Number(m[3])]]);
  }
  for (const p of whole) out.delete(p);
  return out;
}

const byFile = new Map();
for (const f of files) {
  const report = JSON.parse(readFileSync(f, "utf8"));
  // A later report's result for a mutant (a re-run of some lines) replaces the
  // earlier one's unless only the earlier detected it; the mutants it did not
  // run keep their earlier result.
  const ranged = rangesOf(report.config?.mutate);
  for (const [path, e] of Object.entries(report.files)) {
    const entry = ranged.has(path) ? { ...e, ranges: ranged.get(path) } : e;
    const before = byFile.get(path);
    if (!before || before.source !== entry.source) {
      // A run over some lines of the edited file: its results, and the
      // earlier ones it did not reach. A run over the whole file replaces
      // the earlier ones: they measured code that may no longer exist.
      byFile.set(path, before && entry.ranges ? carryInto(before, entry) : entry);
      continue;
    }
    const key = (m) =>
      `${m.location.start.line}:${m.location.start.column}-${m.location.end.line}:${m.location.end.column}:${m.mutatorName}:${m.replacement}`;
    const merged = new Map(before.mutants.map((m) => [key(m), m]));
    // A mutant the other part detected stays detected: the virtual part and
    // the real part (stryker.real.config.mjs) are one testbed.
    for (const m of entry.mutants) {
      const had = merged.get(key(m));
      if (!(had && DETECTED.has(had.status) && !DETECTED.has(m.status))) merged.set(key(m), m);
    }
    byFile.set(path, { ...before, mutants: [...merged.values()] });
  }
}

// Each file as it reads today, with what had to be left behind.
const stale = new Map();
if (current)
  for (const [path, entry] of byFile) {
    const today = existsSync(join(root, path)) ? readFileSync(join(root, path), "utf8") : "";
    if (today === entry.source) continue;
    const now = toCurrent(entry, today);
    byFile.set(path, now.entry);
    stale.set(path, now);
  }

matchJudgements();

const count = (mutants, status) => mutants.filter((m) => m.status === status).length;
const pct = (a, b) => (b === 0 ? "n/a" : `${((100 * a) / b).toFixed(1)}%`);

function row(name, all, equivalents) {
  // A stale mutant (its line changed since its run) has no result today.
  const mutants = all.filter((m) => m.status !== "Stale");
  const killed = count(mutants, "Killed");
  const timeout = count(mutants, "Timeout");
  const survived = count(mutants, "Survived");
  const noCov = count(mutants, "NoCoverage");
  const ignored = count(mutants, "Ignored");
  const errors = count(mutants, "CompileError") + count(mutants, "RuntimeError");
  const detected = killed + timeout;
  const valid = detected + survived + noCov;
  return {
    line: `| ${name} | ${mutants.length} | ${killed} | ${timeout} | ${survived} | ${noCov} | ${ignored} | ${errors} | ${pct(detected, valid)} | ${pct(detected, detected + survived)} | ${equivalents} | ${pct(detected, valid - equivalents)} |`,
  };
}

const out = [];
const staleHead = current ? " stale |" : "";
out.push(
  `| file | mutants | killed | timeout | survived | no coverage | ignored (static) | errors | score | score of covered | judged equivalent | behaviour-changing score |${staleHead}`,
);
out.push(`| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |${current ? " ---: |" : ""}`);
const all = [];
let allEquivalent = 0;
let allStale = 0;
for (const [path, entry] of [...byFile.entries()].sort(([a], [b]) => a.localeCompare(b))) {
  all.push(...entry.mutants);
  const eq = entry.mutants.filter((m) => isEquivalent(m)).length;
  allEquivalent += eq;
  const n = count(entry.mutants, "Stale");
  allStale += n;
  out.push(`${row(path, entry.mutants, eq).line}${current ? ` ${n || ""} |` : ""}`);
}
out.push(`${row("**all**", all, allEquivalent).line}${current ? ` ${allStale} |` : ""}`);
out.push("");
out.push(
  "Score: killed and timed out over all but ignored and errors (Stryker's own). Score of covered: the same without the mutants no test reaches. Behaviour-changing score: the score without the survivors judged equivalent in test/mutation/equivalent/ (each with its reason).",
);
out.push("");
if (current && stale.size > 0) {
  const list = (which) =>
    [...stale.entries()]
      .filter(([, st]) => st[which].length > 0)
      .sort(([a], [b]) => a.localeCompare(b))
      .flatMap(([path, st]) => st[which].map(([a, b]) => `${path}:${a}-${b}`))
      .join(",");
  out.push(
    `Stale: mutants whose lines changed since their run, left out of the row until a run measures them again. The lines changed or added since: \`npm run mutate -- --part virtual --mutate "${list("ranges")}"\`. A stale mutant that reaches past them (a function's whole body, say) is made only by a run over all of its span: \`--mutate "${list("whole")}"\`.`,
  );
  out.push("");
}

const classes = new Map();
for (const m of all) {
  if (m.status !== "Survived" && m.status !== "NoCoverage") continue;
  const c = classes.get(m.mutatorName) ?? { survived: 0, noCov: 0 };
  if (m.status === "Survived") c.survived++;
  else c.noCov++;
  classes.set(m.mutatorName, c);
}
out.push("## Not detected, by mutator");
out.push("");
out.push("| mutator | survived | no coverage |");
out.push("| --- | ---: | ---: |");
for (const [name, c] of [...classes.entries()].sort((a, b) => b[1].survived - a[1].survived))
  out.push(`| ${name} | ${c.survived} | ${c.noCov} |`);
out.push("");

out.push("## Survivors");
out.push("");
for (const [path, entry] of [...byFile.entries()].sort(([a], [b]) => a.localeCompare(b))) {
  const survivors = entry.mutants
    .filter((m) => (m.status === "Survived" || m.status === "NoCoverage") && !isEquivalent(m))
    .sort((a, b) => a.location.start.line - b.location.start.line);
  if (survivors.length === 0) continue;
  out.push(`### ${path}`);
  out.push("");
  for (const m of survivors) {
    const { at, src, repl } = printed(entry, m);
    const none = m.status === "NoCoverage" ? " (no test reaches it)" : "";
    out.push(`- ${at} ${m.mutatorName}: \`${src}\` → \`${repl}\`${none}`);
  }
  out.push("");
}
/** How many mutants Stryker's instrumenter makes of each file (0: nothing to change). */
async function mutantCounts(paths) {
  const { Instrumenter } = await import("@stryker-mutator/instrumenter");
  const quiet = new Proxy({}, { get: (_t, name) => (String(name).startsWith("is") ? () => false : () => {}) });
  const files = paths.map((name) => ({ name, content: readFileSync(join(root, name), "utf8"), mutate: true }));
  const { mutants } = await new Instrumenter(quiet).instrument(files, {
    plugins: null,
    excludedMutations: [],
    ignorers: [],
    noHeader: true,
  });
  const counts = new Map(paths.map((p) => [p, 0]));
  for (const m of mutants) counts.set(m.fileName, (counts.get(m.fileName) ?? 0) + 1);
  return counts;
}
if (unmeasured) {
  const left = spawnSync("git", ["ls-files", "host", "plugins/ssh"], { cwd: root, encoding: "utf8" })
    .stdout.split("\n")
    .filter((f) => f.endsWith(".ts") && !byFile.has(f));
  // A module of types alone gives Stryker nothing to mutate: it is complete
  // as it is, not waiting for a run.
  const counts = await mutantCounts(left);
  const typesOnly = left.filter((f) => counts.get(f) === 0);
  const tracked = left.filter((f) => counts.get(f) !== 0);
  const byDir = new Map();
  for (const f of tracked) {
    const lines = readFileSync(join(root, f), "utf8").split("\n").length;
    const d = byDir.get(dirname(f)) ?? { files: [], lines: 0 };
    d.files.push(basename(f));
    d.lines += lines;
    byDir.set(dirname(f), d);
  }
  const total = [...byDir.values()].reduce((n, d) => n + d.lines, 0);
  out.push("## Modules no run has measured");
  out.push("");
  out.push(`${tracked.length} modules, ${total} lines, by directory:`);
  out.push("");
  for (const [dir, d] of [...byDir.entries()].sort(([a], [b]) => a.localeCompare(b)))
    out.push(`- \`${dir}/\` (${d.files.length}, ${d.lines} lines): ${d.files.join(", ")}`);
  out.push("");
  if (typesOnly.length > 0) {
    out.push(
      `Nothing to mutate (types alone, no code Stryker can change): ${typesOnly.map((f) => `\`${f}\``).join(", ")}.`,
    );
    out.push("");
  }
}
// --keep NAME: a compact copy of the merged result (each file's source and
// each mutant's place, mutator, replacement and status) for git.
if (keepName !== undefined) {
  const dir = join(root, "reports", "mutation-runs");
  mkdirSync(dir, { recursive: true });
  const compact = { files: {} };
  for (const [path, entry] of byFile)
    compact.files[path] = {
      source: entry.source,
      ...(entry.ranges ? { ranges: entry.ranges } : {}),
      mutants: entry.mutants.map(({ id, mutatorName, replacement, location, status }) => ({
        id,
        mutatorName,
        replacement,
        location,
        status,
      })),
    };
  writeFileSync(join(dir, `${basename(keepName, ".json")}.json`), `${JSON.stringify(compact)}\n`);
}
process.stdout.write(`${out.join("\n")}\n`);

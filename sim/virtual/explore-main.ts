import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { availableParallelism } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { parseOrUsage } from "../cli-args.js";
import { LATER_RACES, RACES, WORKTREE_RACE } from "./concurrent-workload.js";
import { exploreSeeds, type Finding, seedsOf, toYaml } from "./explore.js";

// npm run explore -- [--seed S] [--runs N] [--time-limit SECONDS] [--plant NAME]
//                    [--serial | --races NAMES] [--workers N] [--shard I/N] [--json FILE] [--out DIR] [--no-shrink]
// npm run explore -- --merge results/*.json [--out DIR]
// Seeded runs on the virtual engine; the first run that breaks an invariant
// is reported with the seed that replays it, shrunk, and written out as a
// scenario file (under scenarios/found/ unless --out says elsewhere). A shard
// takes every N-th seed from S + I; --json writes its result for --merge.

const { values, positionals } = parseOrUsage(
  "explore",
  "usage: npm run explore -- [--seed S] [--runs N] [--time-limit SECONDS] [--plant NAME] [--serial | --races NAMES] [--workers N] [--shard I/N] [--json FILE] [--out DIR] [--no-shrink], or --merge FILE... [--out DIR]",
  {
    seed: { type: "string", default: "1" },
    runs: { type: "string", default: "500" },
    "time-limit": { type: "string" },
    plant: { type: "string" },
    // Off only to replay a seed as a one-mu-at-a-time explorer drew it.
    serial: { type: "boolean", default: false },
    races: { type: "string" },
    out: { type: "string" },
    workers: { type: "string" },
    shard: { type: "string" },
    json: { type: "string" },
    merge: { type: "boolean", default: false },
    // Report a finding as drawn: for counting findings, not reading them.
    "no-shrink": { type: "boolean", default: false },
  },
  true,
  {
    seed: ["S", "the first seed; seeds S, S+1, … are run in turn"],
    runs: ["N", "how many seeds to run"],
    "time-limit": [
      "SECONDS",
      "stop starting seeds after this long (default: none, every seed runs)",
    ],
    plant: [
      "NAME",
      "run mu with this bug planted (names in host/testbed-plant.ts) (default: none)",
    ],
    serial: "one mu at a time, to replay a seed an explorer drew with it",
    races: [
      "NAMES",
      "every seed races several mu, drawing only these races (comma-separated, as named in sim/virtual/concurrent-workload.ts and later-races.ts) (default: any race, in about a third of the seeds)",
    ],
    workers: ["N", "seeds run in this many child processes (default: the cores)"],
    shard: ["I/N", "take every N-th seed from S+I (default: every seed)"],
    json: ["FILE", "write this run's result there, for --merge (default: none)"],
    out: ["DIR", "where a found bug's scenario file goes (default: scenarios/found/)"],
    merge: "read result files (given after the flags) and report them as one run",
    "no-shrink": "report each finding as drawn, unshrunk (for counting findings)",
  },
);
const runsOf = (n: number) => (n === 1 ? "1 run" : `${n} runs`);

/** One run's (or shard's) outcome, as --json writes it and --merge reads it. */
interface ResultFile {
  seed: number;
  runs: number;
  shard: string | null;
  plant: string | null;
  held: number;
  last: number | null;
  finding: null | { seed: number; broken: string[]; replay: string; yaml: string };
}

const usage = (why: string): never => {
  process.stderr.write(`explore: ${why}; see docs/virtual.md\n`);
  process.exit(2);
};

const dir = values.out ?? join(packageRoot(), "scenarios", "found");

/** Prints a finding and writes its scenario file. */
function report(f: { seed: number; broken: string[]; replay: string; yaml: string }): void {
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `seed-${f.seed}.yaml`);
  writeFileSync(file, f.yaml);
  process.stdout.write(
    `explore: seed ${f.seed} breaks an invariant: ${f.broken.join("; ")}\n` +
      `explore: replay it with: ${f.replay}\n` +
      `explore: shrunk to ${file}\n`,
  );
}

if (values.merge) {
  if (positionals.length === 0) usage("--merge takes the result files to merge");
  let results: ResultFile[] = [];
  try {
    results = positionals.map((p) => JSON.parse(readFileSync(p, "utf8")) as ResultFile);
  } catch (err) {
    usage(`cannot read a result file: ${(err as Error).message}`);
  }
  const held = results.reduce((a, r) => a + r.held, 0);
  const found = results
    .flatMap((r) => (r.finding ? [r.finding] : []))
    .sort((a, b) => a.seed - b.seed);
  for (const f of found) report(f);
  process.stdout.write(
    found.length === 0
      ? `explore: merged ${results.length} results: ${runsOf(held)}, every invariant held\n`
      : `explore: merged ${results.length} results: ${runsOf(held)} held, ${found.length} broke an invariant\n`,
  );
  process.exit(found.length === 0 ? 0 : 1);
}

if (positionals.length > 0)
  usage(`'${positionals[0]}' is not an option; result files go after --merge`);

const seed = Number(values.seed);
const runs = Number(values.runs);
const limit = values["time-limit"] === undefined ? undefined : Number(values["time-limit"]);
const workers = values.workers === undefined ? availableParallelism() : Number(values.workers);
const m = values.shard === undefined ? undefined : /^(\d+)\/(\d+)$/.exec(values.shard);
const shard = m ? { index: Number(m[1]), count: Number(m[2]) } : undefined;
if (
  !Number.isInteger(seed) ||
  !Number.isInteger(runs) ||
  runs < 1 ||
  (limit !== undefined && !(limit > 0)) ||
  !Number.isInteger(workers) ||
  workers < 1
)
  usage("--seed, --runs and --workers take whole numbers, --time-limit a number of seconds");
if (values.shard !== undefined && (!shard || shard.count < 1 || shard.index >= shard.count))
  usage("--shard takes I/N, with I from 0 to N-1");
const races = values.races?.split(",").map((x) => x.trim());
const raceNames = [...RACES, ...LATER_RACES].map((x) => x.name).concat(WORKTREE_RACE);
const unknown = races?.find((x) => !raceNames.includes(x));
if (unknown !== undefined) usage(`no race is named '${unknown}'`);
if (races && values.serial) usage("--races draws several mu at once, which --serial turns off");

const env: Record<string, string> = values.plant ? { MU_TESTBED_PLANT: values.plant } : {};
const seeds = seedsOf(seed, runs, shard);
const t0 = Date.now();
const tty = process.stderr.isTTY;
const out = await exploreSeeds(seeds, {
  env,
  families: { concurrent: !values.serial, ...(races ? { races } : {}) },
  workers,
  shrink: !values["no-shrink"],
  ...(limit !== undefined ? { timeLimitMs: limit * 1000 } : {}),
  onRun: (s) => {
    if (tty && s % 10 === 0) process.stderr.write(`\rexplore: seed ${s} of ${seed + runs - 1}`);
  },
});
if (tty) process.stderr.write("\n");
const secs = ((Date.now() - t0) / 1000).toFixed(1);
const replay = (f: Finding) =>
  `npm run explore -- --seed ${f.seed} --runs 1${values.plant ? ` --plant ${values.plant}` : ""}${values.serial ? " --serial" : ""}${races ? ` --races '${races.join(",")}'` : ""}`;
if (values.json) {
  const result: ResultFile = {
    seed,
    runs,
    shard: values.shard ?? null,
    plant: values.plant ?? null,
    held: out.held,
    last: out.last ?? null,
    finding: out.finding
      ? {
          seed: out.finding.seed,
          broken: out.finding.broken,
          replay: replay(out.finding),
          yaml: toYaml(out.finding),
        }
      : null,
  };
  writeFileSync(values.json, `${JSON.stringify(result, null, 2)}\n`);
}
const what = shard ? `shard ${shard.index}/${shard.count} of ` : "";
if (!out.finding) {
  const next = seeds[out.held];
  const cut = next !== undefined ? ` (the time limit stopped it; --seed ${next} goes on)` : "";
  process.stdout.write(
    `explore: ${runsOf(out.held)} from ${what}seed ${seed}, every invariant held (${secs} s)${cut}\n`,
  );
  process.exit(0);
}
report({
  seed: out.finding.seed,
  broken: out.finding.broken,
  replay: replay(out.finding),
  yaml: toYaml(out.finding),
});
process.exit(1);

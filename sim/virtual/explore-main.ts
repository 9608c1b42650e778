import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { parseOrUsage } from "../cli-args.js";
import { explore, toYaml } from "./explore.js";

// npm run explore -- [--seed S] [--runs N] [--time-limit SECONDS] [--plant NAME] [--out DIR]
// Seeded runs on the virtual engine; the first run that breaks an invariant
// is reported with the seed that replays it, shrunk, and written out as a
// scenario file (under scenarios/found/ unless --out says elsewhere).

const { values } = parseOrUsage(
  "explore",
  "usage: node dist/sim/virtual/explore-main.js [--seed S] [--runs N] [--time-limit SECONDS] [--plant NAME] [--out DIR]",
  {
    seed: { type: "string", default: "1" },
    runs: { type: "string", default: "500" },
    "time-limit": { type: "string" },
    plant: { type: "string" },
    out: { type: "string" },
  },
);
const seed = Number(values.seed);
const runs = Number(values.runs);
const limit = values["time-limit"] === undefined ? undefined : Number(values["time-limit"]);
if (
  !Number.isInteger(seed) ||
  !Number.isInteger(runs) ||
  runs < 1 ||
  (limit !== undefined && !(limit > 0))
) {
  process.stderr.write(
    "explore: --seed and --runs take whole numbers, --time-limit a number of seconds; see the README's explorer section\n",
  );
  process.exit(2);
}
const env: Record<string, string> = values.plant ? { MU_TESTBED_PLANT: values.plant } : {};
const t0 = Date.now();
const tty = process.stderr.isTTY;
let last = seed - 1;
const found = await explore(seed, runs, {
  env,
  ...(limit !== undefined ? { timeLimitMs: limit * 1000 } : {}),
  onRun: (s) => {
    last = s;
    if (tty && s % 10 === 0) process.stderr.write(`\rexplore: seed ${s} of ${seed + runs - 1}`);
  },
});
if (tty) process.stderr.write("\n");
const secs = ((Date.now() - t0) / 1000).toFixed(1);
if (!found) {
  const done = last - seed + 1;
  const cut = done < runs ? ` (the time limit stopped it; --seed ${last + 1} goes on)` : "";
  process.stdout.write(
    `explore: ${done} runs from seed ${seed}, every invariant held (${secs} s)${cut}\n`,
  );
  process.exit(0);
}
const dir = values.out ?? join(packageRoot(), "scenarios", "found");
mkdirSync(dir, { recursive: true });
const file = join(dir, `seed-${found.seed}.yaml`);
writeFileSync(file, toYaml(found));
process.stdout.write(
  `explore: seed ${found.seed} breaks an invariant: ${found.broken.join("; ")}\n` +
    `explore: replay it with: npm run explore -- --seed ${found.seed} --runs 1${values.plant ? ` --plant ${values.plant}` : ""}\n` +
    `explore: shrunk to ${file}\n`,
);
process.exit(1);

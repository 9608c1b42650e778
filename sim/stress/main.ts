import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { HOSTS, runCrew } from "./crew.js";
import { endChecks } from "./end-checks.js";
import { lockFigures, lockLine, verbTable } from "./figures.js";
import { runMu } from "./run-mu.js";

// `npm run stress -- --agents N --seconds S`: a crew of N agents on the sim,
// every verb a real mu process, many at once, for S seconds; then the
// invariants a crew relies on. Exit 0 only when every one holds and no verb
// exited with a code its race did not allow.

function option(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const v = process.argv[i + 1] ?? "";
  if (!/^[1-9][0-9]*$/.test(v)) {
    process.stderr.write(`stress: --${name} takes a whole number of 1 or more, not '${v}'\n`);
    process.exit(2);
  }
  return Number(v);
}

const agents = option("agents", 8);
const seconds = option("seconds", 60);
const keep = process.argv.includes("--keep");

const dir = mkdtempSync(join(tmpdir(), "mu-stress-"));
const sim = join(packageRoot(), "sim", "bin", "mu-plugin-sim");
const env: Record<string, string> = {
  PATH: process.env.PATH ?? "/usr/bin:/bin",
  HOME: dir,
  MU_STATE_DIR: join(dir, "state"),
  MU_MUX: "sim",
  MU_TRACE_DIR: join(dir, "traces"),
  // A plant named here runs the testbed's build, to show the checks catch it.
  ...(process.env.MU_TESTBED_PLANT ? { MU_TESTBED_PLANT: process.env.MU_TESTBED_PLANT } : {}),
};
const checkout = join(dir, "checkout");
for (const d of ["world", "extra-world", "traces", "bin"]) mkdirSync(join(dir, d));
writeFileSync(
  join(dir, "world", "world.json"),
  JSON.stringify({ preset: "link-job", instance: "sim-1" }),
);
// The churned plugin is a link-only sim under a name of its own, in its own world.
writeFileSync(
  join(dir, "extra-world", "world.json"),
  JSON.stringify({ preset: "link-only", instance: "sim-x", hello: { plugin: { name: "extra" } } }),
);
symlinkSync(sim, join(dir, "bin", "mu-plugin-extra"));

/** The checkout the crew's worktrees come from and collect into: one commit on its branch. */
function makeCheckout(path: string): void {
  mkdirSync(path);
  writeFileSync(join(path, "f"), "one\n");
  const id = ["-c", "user.name=crew", "-c", "user.email=crew@localhost"];
  for (const args of [
    ["init", "-q"],
    ["add", "f"],
    [...id, "commit", "-qm", "one"],
  ]) {
    const r = spawnSync("git", ["-C", path, ...args], { encoding: "utf8" });
    if (r.status !== 0) throw new Error(`set-up: git ${args.join(" ")}: ${r.stderr.trim()}`);
  }
}

async function setUp(argv: string[]): Promise<void> {
  const r = await runMu(argv, env, 60_000, checkout);
  if (r.code !== 0) throw new Error(`set-up: mu ${argv.join(" ")} exited ${r.code}: ${r.line}`);
}

let failed = false;
try {
  makeCheckout(checkout);
  await setUp(["plugin", "add", "sim", "--", sim, "--world", join(dir, "world")]);
  for (const h of HOSTS) await setUp(["host", "add", h, "--plugin", "sim", "--repo", "seeded"]);
  process.stdout.write(`stress: ${agents} agents for ${seconds} s in ${dir}\n`);
  const log = await runCrew({
    agents,
    seconds,
    env,
    extraArgv: [join(dir, "bin", "mu-plugin-extra"), "--world", join(dir, "extra-world")],
    checkout,
    world: join(dir, "world"),
  });
  process.stdout.write(`\n${verbTable(log.runs, seconds)}\n\n`);
  process.stdout.write(
    `${lockLine(lockFigures(env.MU_TRACE_DIR as string, log.runs), log.runs.length)}\n`,
  );
  const broken = [
    ...log.unexpected.map(
      (u) =>
        `mu ${u.run.argv.join(" ")} exited ${u.run.code ?? u.run.signal} (allowed ${u.allowed.join("/")}): ${u.run.line}`,
    ),
    ...log.bothWon.map((b) => `both won: ${b}`),
    ...log.wrongCollect,
    ...(await endChecks(dir, env, checkout, log.runs)),
  ];
  failed = broken.length > 0;
  process.stdout.write(
    failed
      ? `\n${broken.length} broken:\n${broken.map((b) => `  ${b}`).join("\n")}\n`
      : "\nevery invariant held: no intent left, no record names anything gone, each effect applied at most once, each close collected its own agent's commit under a ref, everything removed\n",
  );
} catch (err) {
  failed = true;
  process.stderr.write(`stress: ${(err as Error).message}\n`);
} finally {
  if (keep || failed) process.stdout.write(`kept: ${dir}\n`);
  else rmSync(dir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);

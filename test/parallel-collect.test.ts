import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { muBin, tempState } from "./helpers.js";

// Several closes of --worktree agents at once on one checkout, with the sim
// plugin and real git: each must report its own agent's commit, every commit
// reported must be reachable from a ref, and none may fail. Another git fetch
// in the checkout (the user's, or mu host fetch) must not change what a close
// collects either.

// MU_TESTBED_PLANT=shared-fetch-head in the test's own environment runs the
// testbed's build of mu with that plant in, to show these tests catch it.
const PLANT = process.env.MU_TESTBED_PLANT;
const bin = PLANT ? join(packageRoot(), "dist/sim/runner/mu-testbed.js") : muBin;

const AGENTS = 4;
const ROUNDS = 2;

let state: ReturnType<typeof tempState>;
let local: string;
let world: string;
let env: Record<string, string>;

function git(cwd: string, ...args: string[]): string {
  const r = spawnSync(
    "git",
    ["-c", "user.name=t", "-c", "user.email=t@localhost", "-C", cwd, ...args],
    { encoding: "utf8" },
  );
  if (r.status !== 0) throw new Error(`git ${args.join(" ")}: ${r.stderr}`);
  return r.stdout.trim();
}

function muSync(args: string[]) {
  const r = spawnSync(process.execPath, [bin, ...args], { cwd: local, env, encoding: "utf8" });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

function muAsync(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((done) => {
    const c = spawn(process.execPath, [bin, ...args], { cwd: local, env });
    let stdout = "";
    let stderr = "";
    c.stdout.on("data", (b: Buffer) => {
      stdout += b.toString();
    });
    c.stderr.on("data", (b: Buffer) => {
      stderr += b.toString();
    });
    c.on("close", (code) => done({ code, stdout, stderr }));
  });
}

function must(args: string[]): string {
  const r = muSync(args);
  if (r.code !== 0) throw new Error(`mu ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
  return r.stdout;
}

beforeEach(() => {
  state = tempState();
  world = join(state.dir, "world");
  local = join(state.dir, "local");
  mkdirSync(world);
  mkdirSync(local);
  writeFileSync(join(world, "world.json"), JSON.stringify({ preset: "link-job", instance: "s1" }));
  env = {
    PATH: process.env.PATH ?? "",
    ...state.env,
    MU_MUX: "sim",
    ...(PLANT ? { MU_TESTBED_PLANT: PLANT } : {}),
  };
  git(local, "init", "-q");
  writeFileSync(join(local, "f"), "one\n");
  git(local, "add", "f");
  git(local, "commit", "-qm", "one");
  must([
    "plugin",
    "add",
    "sim",
    "--",
    join(packageRoot(), "sim", "bin", "mu-plugin-sim"),
    "--world",
    world,
  ]);
  must(["host", "add", "box", "--plugin", "sim", "--repo", "seeded"]);
});
afterEach(() => state.done());

/** Spawns the agents and commits distinct work in each one's tree; returns each one's commit. */
function agentsWithWork(round: number): Map<string, string> {
  const heads = new Map<string, string>();
  for (let i = 1; i <= AGENTS; i++) {
    const name = `r${round}a${i}`;
    must(["agent", "spawn", name, "--host", "box", "--worktree"]);
    const tree = join(world, "machines", "box", "mu", "trees", "main", name);
    writeFileSync(join(tree, `work-${name}`), `${name}\n`);
    git(tree, "add", ".");
    git(tree, "commit", "-qm", `${name}'s work`);
    heads.set(name, git(tree, "rev-parse", "HEAD"));
  }
  return heads;
}

/**
 * What went wrong with the closes, one line each: a close that failed or
 * named another commit than its agent's, a commit no ref here holds, a tree
 * left on the host. Listed together, so one run shows every kind it hit.
 */
function closeProblems(
  heads: Map<string, string>,
  results: { code: number | null; stdout: string; stderr: string }[],
): string[] {
  const problems: string[] = [];
  [...heads.keys()].forEach((name, i) => {
    const r = results[i] as { code: number | null; stdout: string; stderr: string };
    const want = heads.get(name) as string;
    if (r.code !== 0) problems.push(`close ${name} exited ${r.code}: ${r.stderr.trim()}`);
    const got = /^collected ([0-9a-f]{40}) /m.exec(r.stdout)?.[1];
    if (r.code === 0 && got !== want)
      problems.push(`close ${name} reported ${got}, its agent's commit is ${want}`);
    const refs = git(local, "for-each-ref", "--contains", want, "--format=%(refname)", "refs/");
    if (refs === "") problems.push(`no ref holds ${name}'s commit ${want}`);
    const tree = join(world, "machines", "box", "mu", "trees", "main", name);
    if (r.code === 0 && spawnSync("test", ["-e", tree]).status === 0)
      problems.push(`close ${name} left its tree`);
  });
  return problems;
}

describe("parallel closes of worktree agents on one checkout", () => {
  it("each collects its own agent's commit under a ref, with no spurious failure", async () => {
    for (let round = 1; round <= ROUNDS; round++) {
      const heads = agentsWithWork(round);
      const results = await Promise.all(
        [...heads.keys()].map((n) => muAsync(["agent", "close", n])),
      );
      expect(closeProblems(heads, results), `round ${round}`).toEqual([]);
    }
    // mu's fetch places are gone, and it wrote no FETCH_HEAD in the checkout.
    expect(spawnSync("ls", [join(local, ".git", "mu", "fetch")], { encoding: "utf8" }).stdout).toBe(
      "",
    );
    expect(spawnSync("test", ["-e", join(local, ".git", "FETCH_HEAD")]).status).toBe(1);
  }, 180_000);

  it("a git fetch and a mu host fetch in the checkout meanwhile change nothing a close collects", async () => {
    const decoy = join(state.dir, "decoy");
    mkdirSync(decoy);
    git(decoy, "init", "-q");
    writeFileSync(join(decoy, "d"), "decoy\n");
    git(decoy, "add", "d");
    git(decoy, "commit", "-qm", "decoy");
    const decoyHead = git(decoy, "rev-parse", "HEAD");
    for (let round = 1; round <= ROUNDS; round++) {
      const heads = agentsWithWork(round);
      // The user's own fetches, over and over, until the closes are done.
      const loop = spawn(
        "/bin/sh",
        ["-c", `while :; do git -C '${local}' fetch -q '${decoy}' HEAD; done`],
        { stdio: "ignore", detached: true },
      );
      try {
        const results = await Promise.all([
          ...[...heads.keys()].map((n) => muAsync(["agent", "close", n])),
          muAsync(["host", "fetch", "box", "--from", decoy]),
        ]);
        const fetched = results.pop() as { code: number | null; stdout: string; stderr: string };
        const problems = closeProblems(heads, results);
        if (fetched.code !== 0 || !fetched.stdout.startsWith(`fetched ${decoyHead} `))
          problems.push(
            `host fetch exited ${fetched.code}: ${fetched.stdout}${fetched.stderr}`.trim(),
          );
        expect(problems, `round ${round}`).toEqual([]);
      } finally {
        process.kill(-(loop.pid as number), "SIGKILL");
      }
    }
    expect(git(local, "rev-parse", "refs/mu/fetched/box")).toBe(decoyHead);
  }, 180_000);
});

import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";

// The explorer fanned out: --workers runs seeds in child processes with the
// one-worker answer, --shard takes every n-th seed, and --merge joins the
// shards' result files into the report one unsharded run gives. Runs the
// built CLI (npm run build first), as a CI job or an Indexed Job would.

const run = promisify(execFile);
const main = join(packageRoot(), "dist/sim/virtual/explore-main.js");
const tmp = mkdtempSync(join(tmpdir(), "mu-explore-scale-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

async function explore(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const r = await run(process.execPath, [main, ...args], { timeout: 600_000 });
    return { code: 0, out: r.stdout };
  } catch (err) {
    const e = err as { code?: number; stdout?: string };
    return { code: e.code ?? -1, out: e.stdout ?? "" };
  }
}

/** Output without what may differ between equal runs: wall time and where files went. */
const same = (out: string) => out.replace(/ \([\d.]+ s\)/g, "").replace(/shrunk to \S+/g, "shrunk");

describe("the explorer, scaled out", () => {
  it("gives one worker's answer with two, and two shards merged give one run's", async () => {
    const plant = ["--plant", "wait-uses-settle", "--seed", "1", "--runs", "8"];
    const one = await explore([...plant, "--workers", "1", "--out", join(tmp, "one")]);
    expect(one.code, one.out).toBe(1);
    const two = await explore([...plant, "--workers", "2", "--out", join(tmp, "two")]);
    expect(same(two.out)).toBe(same(one.out));
    const file = (out: string) => `${/seed-\d+/.exec(out)?.[0]}.yaml`;
    expect(readFileSync(join(tmp, "two", file(two.out)), "utf8")).toBe(
      readFileSync(join(tmp, "one", file(one.out)), "utf8"),
    );
    const shards = [0, 1].map((i) => join(tmp, `shard-${i}.json`));
    for (const [i, f] of shards.entries())
      await explore([...plant, "--workers", "1", "--shard", `${i}/2`, "--json", f, "--out", tmp]);
    const merged = await explore(["--merge", ...shards, "--out", join(tmp, "merged")]);
    expect(merged.code, merged.out).toBe(1);
    // The lowest failing seed, its broken invariants and its replay come first, as one run reports them.
    expect(same(merged.out).split("\n").slice(0, 3)).toEqual(same(one.out).split("\n").slice(0, 3));
  }, 900_000);

  it("counts the same held runs, sharded and merged, as unsharded", async () => {
    const clean = ["--seed", "20", "--runs", "4", "--workers", "1"];
    const one = await explore(clean);
    expect(one.code, one.out).toBe(0);
    expect(one.out).toMatch(/^explore: 4 runs from seed 20, every invariant held/);
    const shards = [0, 1].map((i) => join(tmp, `clean-${i}.json`));
    for (const [i, f] of shards.entries())
      expect((await explore([...clean, "--shard", `${i}/2`, "--json", f])).code).toBe(0);
    const merged = await explore(["--merge", ...shards]);
    expect(merged).toEqual({
      code: 0,
      out: "explore: merged 2 results: 4 runs, every invariant held\n",
    });
  }, 900_000);
});

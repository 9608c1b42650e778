import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Ajv2020 } from "ajv/dist/2020.js";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { packageRoot } from "../host/package-root.js";
import { runScenario } from "../sim/runner/execute.js";
import type { LoadedScenario } from "../sim/runner/scenario.js";
import { LATER_RACES, WORKTREE_RACE } from "../sim/virtual/concurrent-workload.js";
import { check, explore, toYaml, workload } from "../sim/virtual/explore.js";
import { runVirtual } from "../sim/virtual/run-scenario.js";

// The explorer on the virtual engine: clean runs hold every invariant; a
// bug planted in mu (MU_TESTBED_PLANT) is found within the default run
// count, reported with its seed, shrunk, and written as a scenario file that
// fails in the real engine too.

const PLANT = { MU_TESTBED_PLANT: "resend-without-lookup" };

/**
 * The workload's own verbs in a shrunk finding: the mu steps before the
 * faults are cleared, but the set-up. What follows the clearing is the
 * settle and the liveness checks, which a shrink keeps whole.
 */
function workloadVerbs(s: LoadedScenario): string[] {
  let end = s.steps.length;
  for (let j = s.steps.length - 1; j >= 0; j--) {
    const st = s.steps[j];
    if (st && "world" in st && st.world.faults?.length === 0) {
      end = j;
      break;
    }
  }
  return s.steps
    .slice(0, end)
    .filter((st) => "mu" in st)
    .map((st) => String((st as { mu: string }).mu))
    .filter((mu) => !/^(plugin add|host add) /.test(mu));
}

// Each fixed bug the virtual engine can express, kept as a plant
// (host/testbed-plant.ts): the explorer finds it within a bounded number of
// seeds and shrinks the workload to the few verbs that show it.
const FOUND: { plant: string; seeds: number; broken: RegExp; verbs: number }[] = [
  // 15.1: a command resent after mu died with it applied.
  {
    plant: "resend-no-msgid",
    seeds: 100,
    broken: /channel\.command:\S+ was applied \d+ times but asked for \d+/,
    verbs: 2,
  },
  // 15.3: after a fresh the next send is refused for the old incarnation.
  {
    plant: "fresh-keeps-incarnation",
    seeds: 60,
    broken: /no longer usable: 'agent send z after-\d+' exited 5/,
    verbs: 0,
  },
  // 15.4: a second wait on the settled turn waits for a new one.
  {
    plant: "wait-uses-settle",
    seeds: 60,
    broken: /no longer usable: 'wait z --timeout 60' exited 5/,
    verbs: 0,
  },
  // 15.2: a reattach whose view dies a moment after it opened exits 0.
  {
    plant: "reattach-without-window",
    seeds: 150,
    broken: /a reattach left no live view: 'agent reattach [ab]' exited 0/,
    verbs: 2,
  },
  // A power cut: a commit that returned must survive it (faults).
  {
    plant: "no-dir-fsync",
    seeds: 40,
    broken: /a commit that returned was lost: host \S+, recorded before/,
    verbs: 3,
  },
  {
    plant: "no-temp-fsync",
    seeds: 40,
    broken: /a commit that returned was lost: host \S+, recorded before/,
    verbs: 3,
  },
  // A send or interrupt answered naming another msgId or incarnation (nemesis).
  {
    plant: "reply-check-skipped",
    seeds: 80,
    broken: /mu reported delivery msg-[0-9a-f]+ made on a reply that names another msgId/,
    verbs: 3,
  },
  // 15.5: host rm with a live agent leaves it unreachable.
  {
    plant: "host-rm-live-agents",
    seeds: 60,
    // Mu unusable after, or the model first: an agent read on a host that was removed.
    broken: /no longer usable: |the model allows 3 \(the model\)/,
    verbs: 2,
  },
  // A plugin's stderr line cut inside a secret that a longer one before it,
  // masked, pulled into view.
  {
    plant: "cut-masked-whole",
    seeds: 40,
    broken: /part of the canary is in mu's output/,
    verbs: 1,
  },
];

// A race mu would lose, planted (host/testbed-plant.ts) and found among the
// concurrent family's races that show it; without the plant the shrunk run holds.
const RACED: {
  plant: string;
  races: string[];
  seeds: number;
  broken: RegExp;
  verbs: number;
  built?: true;
}[] = [
  {
    plant: "check-outside-lock",
    races: ["two acquires of one name"],
    seeds: 20,
    broken: /machine \S+ \(key h1-\S+\) exists, but mu neither records it nor has an intent/,
    verbs: 2,
  },
  {
    plant: "release-without-holders",
    races: ["spawn racing host release", "host release racing a send"],
    seeds: 20,
    broken: /the job of agent main\/[ac] still runs on machine h1, which mu released/,
    verbs: 3,
  },
  // A spawn of the name runs to its end while the abandon waits at the
  // pause after its commit; the abandon's sweep by name then kills its view.
  {
    plant: "sweep-after-commit",
    races: ["agent forget --abandon racing a spawn of the name"],
    seeds: 20,
    broken: /a live agent's view was killed by another mu: 'agent spawn a --host box' exited 0/,
    verbs: 3,
  },
  // Two closes of --worktree agents (and a host fetch) on one checkout: a
  // fetch through its one FETCH_HEAD lands between another's fetch and its read.
  {
    plant: "shared-fetch-head",
    races: [WORKTREE_RACE],
    seeds: 40,
    broken:
      /a collect reported what is not its own: '(agent close a[12]|host fetch wt)' named a commit from wt:\S+ that no fetch from there brought/,
    // The two spawns and the three verbs that race: without any of them the
    // seed's turns fall elsewhere and no fetch lands between another's two.
    verbs: 5,
    built: true,
  },
  // A spawn cut short leaves a tree its close takes back; work committed in
  // it meanwhile keeps the tree (moved on), and the name's next spawn makes
  // its own tree there without keeping that commit.
  {
    plant: "tree-replaced-unkept",
    races: [WORKTREE_RACE],
    seeds: 20,
    broken: /an agent's committed work was lost: a[12]'s work/,
    verbs: 5,
    built: true,
  },
];

describe("the explorer", () => {
  it("holds every invariant over clean seeded runs", async () => {
    expect(await explore(1, 40)).toBeUndefined();
  }, 300_000);

  it("holds every invariant over every race of several mu at once", async () => {
    const found = await explore(1, 24, { families: { concurrent: true } });
    expect(found?.broken ?? []).toEqual([]);
  }, 300_000);

  it("holds every invariant over closes of --worktree agents racing on one checkout", async () => {
    const found = await explore(1, 4, { families: { concurrent: true, races: [WORKTREE_RACE] } });
    expect(found?.broken ?? []).toEqual([]);
  }, 300_000);

  // Each race drawn from a stream of its own, alone: a few seeds apiece.
  for (const race of LATER_RACES) {
    it(`holds every invariant over ${race.name}`, async () => {
      const found = await explore(1, 8, { families: { concurrent: true, races: [race.name] } });
      expect(found?.broken ?? []).toEqual([]);
    }, 300_000);
  }

  for (const f of RACED) {
    it(`finds and shrinks the planted ${f.plant} within ${f.seeds} seeds of several mu at once`, async () => {
      const families = { concurrent: true, races: f.races };
      if (f.built) {
        // Run as `npm run explore` runs it, in a process of its own: inside
        // the test process the real git this race runs meets the scheduler
        // in another order for the same seed, and the plant falls elsewhere.
        const out = spawnSync(
          process.execPath,
          [
            join(packageRoot(), "dist/sim/virtual/explore-main.js"),
            ...["--plant", f.plant, "--races", f.races.join(","), "--runs", String(f.seeds)],
            ...["--workers", "1", "--no-shrink", "--out", mkdtempSync(join(tmpdir(), "mu-found-"))],
          ],
          { encoding: "utf8", timeout: 540_000 },
        );
        expect(out.stdout + out.stderr).toMatch(/seed \d+ breaks an invariant: /);
        expect(out.stdout + out.stderr).toMatch(f.broken);
        return;
      }
      const found = await explore(1, f.seeds, { env: { MU_TESTBED_PLANT: f.plant }, families });
      expect(found, `${f.plant} was not found in ${f.seeds} runs`).toBeDefined();
      if (!found) return;
      expect(found.broken.join("\n")).toMatch(f.broken);
      expect(found.scenario.interleave).toBe(found.seed);
      const verbs = workloadVerbs(found.scenario);
      expect(verbs.length, verbs.join("; ")).toBeLessThanOrEqual(f.verbs);
      const { MU_TESTBED_PLANT: _p, ...env } = found.scenario.env ?? {};
      expect(await check({ ...found.scenario, env })).toEqual([]);
    }, 600_000);
  }

  for (const f of FOUND) {
    it(`finds and shrinks the planted ${f.plant} within ${f.seeds} seeds`, async () => {
      const found = await explore(1, f.seeds, { env: { MU_TESTBED_PLANT: f.plant } });
      expect(found, `${f.plant} was not found in ${f.seeds} runs`).toBeDefined();
      if (!found) return;
      expect(found.broken.join("\n")).toMatch(f.broken);
      const verbs = workloadVerbs(found.scenario);
      expect(verbs.length, verbs.join("; ")).toBeLessThanOrEqual(f.verbs);
      // Without the plant the shrunk run holds every invariant.
      const { MU_TESTBED_PLANT: _p, ...env } = found.scenario.env ?? {};
      expect(await check({ ...found.scenario, env })).toEqual([]);
    }, 600_000);
  }

  it("is a function of its seed", async () => {
    const a = await runVirtual(workload(7), { lenient: true });
    const b = await runVirtual(workload(7), { lenient: true });
    expect(a.ran && b.ran).toBe(true);
    if (a.ran && b.ran) {
      expect(b.exits).toEqual(a.exits);
      expect(b.transcript).toEqual(a.transcript);
    }
    expect(JSON.stringify(workload(8))).not.toBe(JSON.stringify(workload(7)));
  });

  it("interleaves several mu by the seed it is given, the same way for the same seed", async () => {
    // Two acquires of one name: which of them the scheduler lets commit
    // first is the one that wins, and the other is refused.
    const race = workload(24, {}, { concurrent: true });
    expect(
      race.steps
        .filter((st) => "mu" in st && st.background)
        .map((st) => String((st as { mu: string }).mu)),
    ).toEqual(["host acquire --provider sim h1"]);
    const exits = async (interleave: number) => {
      const o = await runVirtual({ ...race, interleave }, { lenient: true });
      return o.ran ? o.exits.join(",") : o.why;
    };
    // Some seed lets the other acquire win (which ones depends on how many
    // turns the verbs take), and a seed run again gives the same order.
    const seen = new Map<string, number>();
    for (let k = 1; k <= 8; k++) {
      const got = await exits(k);
      if (!seen.has(got)) seen.set(got, k);
    }
    expect([...seen.keys()].length, [...seen.keys()].join(" | ")).toBeGreaterThan(1);
    for (const [got, k] of seen) expect(await exits(k)).toBe(got);
  }, 120_000);

  it("finds the planted bug, shrinks it, and the scenario it writes fails in the real engine", async () => {
    const found = await explore(1, 500, { env: PLANT });
    expect(found, "the planted bug was not found in 500 runs").toBeDefined();
    if (!found) return;
    expect(found.broken.join("\n")).toMatch(/(host\.acquire|job\.start):\S+ was applied 2 times/);
    // Shrunk to the set-up (the plugin, maybe a host), the verb that dies and
    // the one that resends, and the agents' closes, which are always kept.
    const verbs = workloadVerbs(found.scenario);
    expect(verbs.length, verbs.join("; ")).toBeLessThanOrEqual(2);
    const text = toYaml(found);
    const schema = JSON.parse(
      readFileSync(join(packageRoot(), "schemas/scenario.schema.json"), "utf8"),
    );
    const valid = new Ajv2020({ strict: true, allErrors: true }).compile(schema);
    const doc = parse(text) as LoadedScenario;
    expect(valid(doc), JSON.stringify(valid.errors)).toBe(true);
    // With the planted bug, and without it, where the same file must hold:
    // two sandboxes of their own, so they run at once.
    const { MU_TESTBED_PLANT: _plant, ...env } = doc.env ?? {};
    const [real, fixed] = await Promise.all([
      runScenario({ ...doc, file: "" }),
      runScenario({ ...doc, env, file: "" }),
    ]);
    expect(real.ok).toBe(false);
    expect(real.failure).toMatch(
      /applied (host\.acquire|job\.start):\S+ 2 times, at most 1 allowed/,
    );
    expect(fixed.failure).toBeUndefined();
  }, 300_000);
});

import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RULE_TABLE } from "../host/effects/rule-table.js";
import { packageRoot } from "../host/package-root.js";
import { merge } from "../sim/plugin/declaration.js";
import { runScenario, type ScenarioResult } from "../sim/runner/execute.js";
import { findScenarioFiles, loadScenario, selectFiles } from "../sim/runner/load.js";
import { longestFirst } from "../sim/runner/order.js";
import { markdown, mermaid, progressLine, sequenceDoc } from "../sim/runner/report.js";
import { worldNote } from "../sim/runner/report-notes.js";

describe("scenario files", () => {
  const withFile = (text: string, fn: (file: string) => void) => {
    const dir = mkdtempSync(join(tmpdir(), "mu-runner-"));
    try {
      const file = join(dir, "bad.yaml");
      writeFileSync(file, `scenario: x\nabout: y\nproves: [a]\n${text}`);
      fn(file);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  };
  const message = (file: string) => {
    try {
      loadScenario(file);
    } catch (err) {
      return (err as Error).message;
    }
    throw new Error("loaded a bad file");
  };

  it("an unknown proves id is refused in one line naming the file, the id and the closest known one", () => {
    const dir = mkdtempSync(join(tmpdir(), "mu-runner-"));
    try {
      const file = join(dir, "bad.yaml");
      writeFileSync(
        file,
        "scenario: x\nabout: y\nproves: [host.acquir]\nsteps:\n  - mu: --version\n",
      );
      const m = message(file);
      expect(m).toBe(
        `${file}: proves 'host.acquir', which no rule or listed id defines (closest: 'host.acquire'); fix it, or list it in docs/decisions.md under "Ids a scenario may prove"`,
      );
      for (const ok of ["field.anything-at-all", "guard.writer-alive", "host.acquire"]) {
        writeFileSync(file, `scenario: x\nabout: y\nproves: [${ok}]\nsteps:\n  - mu: --version\n`);
        expect(message(file)).not.toMatch(/proves/);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("every id the scenarios prove is a rule, a field report or listed in docs/decisions.md", () => {
    const bad = findScenarioFiles(join(packageRoot(), "scenarios")).flatMap((f) => {
      try {
        loadScenario(f);
        return [];
      } catch (err) {
        return [(err as Error).message];
      }
    });
    expect(bad).toEqual([]);
  });

  it("a misspelt key is named with its step and the key it most likely meant, in one short line", () => {
    withFile("steps:\n  - mu: --version\n  - mu: --version\n    signaled: SIGKILL\n", (file) => {
      const m = message(file);
      expect(m).toMatch(
        new RegExp(
          `^${file}: step 2: unknown key 'signaled' \\(did you mean 'signalled'\\?\\); known keys: mu, `,
        ),
      );
      expect(m.length).toBeLessThan(400);
    });
  });

  it("a capture on a background run is refused, since no later step could read it", () => {
    withFile(
      'steps:\n  - mu: --version\n    background: true\n    capture: { v: "(.*)" }\n  - join: true\n',
      (file) => {
        expect(message(file)).toBe(
          `${file}: step 1 captures from a background run, which no later step could read; capture in a step that is not in the background`,
        );
      },
    );
  });

  it("a fault's misspelt key is named by its path", () => {
    withFile(
      "world:\n  preset: link-only\n  instance: i\n  faults:\n    - on: link.exec\n      do: { crash: true }\n      tims: once\nsteps:\n  - mu: --version\n",
      (file) => {
        expect(message(file)).toMatch(
          /: world\/faults\/0: unknown key 'tims' \(did you mean 'times'\?\)/,
        );
      },
    );
  });

  it("a run chooses its files by path before loading, so a bad file elsewhere blocks only the runs that include it", () => {
    const files = ["a/one.yaml", "b/two.yaml"].map((f) => join(packageRoot(), "scenarios", f));
    expect(selectFiles(files, ["a/one"])).toEqual([files[0]]);
    expect(selectFiles(files, [])).toEqual(files);
    expect(selectFiles(files, ["nothing"])).toEqual([]);
  });
});

describe("a file that waits out hours (virtualOnly)", () => {
  const file = join(packageRoot(), "scenarios/link/exec-long-script.yaml");

  it("runs on the virtual engine from the real runner, one step record per mu step", async () => {
    const r = await runScenario(loadScenario(file));
    expect(r.failure).toBeUndefined();
    expect(r.ok).toBe(true);
    expect(r.steps.map((st) => st.exit)).toEqual([0, 0, 0, 5]);
    expect(r.steps[3]?.step).toMatch(/^mu host exec box --timeout-ms 600000/);
  }, 120_000);

  it("fails when the virtual engine finds a step that does not hold", async () => {
    const s = loadScenario(file);
    const last = s.steps.at(-1);
    if (!last || !("mu" in last)) throw new Error("the file changed: its last step is a mu step");
    const wrong = { ...s, steps: [...s.steps.slice(0, -1), { ...last, exit: 124 }] };
    const r = await runScenario(wrong);
    expect(r.ok).toBe(false);
    expect(r.failure).toMatch(/^virtual engine: step 4: exit 5, expected 124/);
  }, 120_000);
});

describe("reports", () => {
  const result = (id: string, proves: string[], ok: boolean): ScenarioResult => ({
    scenario: { scenario: id, about: `about ${id} | piped`, proves, steps: [], file: "" },
    ok,
    ms: 1,
    steps: [],
    transcript: [],
    ...(ok ? {} : { failure: "boom" }),
  });

  it("lists every rule-table row, marking the ones no passing scenario proves", () => {
    const md = markdown([
      result("a", ["stop.reissue"], true),
      result("b", ["release.reissue"], false),
    ]);
    for (const row of RULE_TABLE) expect(md).toContain(`| ${row.id} |`);
    expect(md).toMatch(/\| stop\.reissue \| job\.stop \| .* \| a \| - \|/);
    expect(md).toMatch(/\| release\.reissue \| .* \| \*\*gap\*\* \| b \|/);
    expect(md).toContain(
      `${RULE_TABLE.length - 1} of ${RULE_TABLE.length} rows have no passing scenario yet.`,
    );
  });

  it("says of a filtered run's unproved rows that they were not run, not that they are gaps", () => {
    const md = markdown(
      [result("a", ["stop.reissue"], true), result("b", ["release.reissue"], false)],
      true,
    );
    expect(md).toMatch(/\| fence\.instance \| .* \| not run in this run \| - \|/);
    expect(md).toMatch(/\| release\.reissue \| .* \| \*\*gap\*\* \| b \|/);
    expect(md).toContain(`A filtered run: 1 of ${RULE_TABLE.length} rows were proved`);
    expect(md).not.toContain("have no passing scenario yet");
  });

  it("draws the exchange as a sequence diagram", () => {
    const d = mermaid([
      { dir: "in", msg: { jsonrpc: "2.0", id: 1, method: "initialize" } },
      { dir: "out", msg: { invalid: "not-json" } },
      { dir: "in", msg: { jsonrpc: "2.0", method: "shutdown" } },
    ]);
    expect(d.split("\n").slice(4, 7)).toEqual([
      "  mu->>plugin: initialize id 1",
      "  plugin-->>mu: INVALID not-json",
      "  mu->>plugin: shutdown",
    ]);
  });

  it("shows how each step ended, the crash point it ran with and the journal lines mu printed", () => {
    const steps = [
      {
        step: "mu host acquire h1",
        ok: true,
        startedAt: 0,
        endedAt: 10,
        exit: null,
        signal: "SIGKILL",
      },
      {
        step: "mu host status h1",
        ok: true,
        startedAt: 10,
        endedAt: 20,
        exit: 0,
        signal: null,
        stderr: "mu: journal: host.acquire for host:h1 (key k; id 1): acquire.lookup.found\n",
      },
    ];
    const d = mermaid([], steps, 0, ["effect.reply-read", undefined]).split("\n");
    expect(d).toContain(
      "  Note over mu: +0.010s step 1 ends: killed by SIGKILL (crash point effect.reply-read)",
    );
    expect(d).toContain("  Note over mu: +0.020s step 2 ends: exit 0");
    expect(d).toContain(
      "  Note over mu: mu: journal: host.acquire for host:h1 (key k, id 1): acquire.lookup.found",
    );
  });

  it("spells out the world's notes, so opposite facts never read alike", () => {
    expect(worldNote({ eof: true, ignored: false })).toBe(
      "the plugin saw stdin's end (EOF) and winds down",
    );
    expect(worldNote({ eof: true, ignored: true })).toMatch(/ignores it/);
    expect(worldNote({ escaped: 42 })).toBe("a helper left the plugin's process group, pid 42");
    expect(worldNote({ other: { a: 1 } })).toBe('other {"a":1}');
  });
});

describe("reports a person reads", () => {
  const base = { ok: true, ms: 1, transcript: [] as unknown[], steps: [] };
  const scenario = { scenario: "x/y", about: "what x/y shows", proves: ["r"], steps: [], file: "" };

  it("the summary shows each scenario's about and links to its folder", () => {
    const md = markdown([{ ...base, scenario }]);
    expect(md).toContain("| [x/y](x/y/) | pass | 1 | r | what x/y shows |");
    expect(markdown([{ ...base, scenario: { ...scenario, about: "a | b" } }])).toContain(
      "| a \\| b |",
    );
  });

  it("the diagram marks each step, time since the start, and a plugin restart", () => {
    const t0 = 1_000_000;
    const steps = [
      { step: "mu plugin add sim", ok: true, startedAt: t0 + 10, endedAt: t0 + 100 },
      { step: "mu host exec box", ok: true, startedAt: t0 + 200, endedAt: t0 + 400 },
    ];
    const d = mermaid(
      [
        { t: t0 + 20, pid: 7, dir: "in", msg: { jsonrpc: "2.0", id: 1, method: "initialize" } },
        { t: t0 + 30, pid: 7, dir: "out", msg: { jsonrpc: "2.0", id: 1, result: {} } },
        { t: t0 + 250, pid: 9, dir: "in", msg: { jsonrpc: "2.0", id: 1, method: "initialize" } },
      ],
      steps,
      t0,
    );
    expect(d.split("\n").slice(4, 13)).toEqual([
      "  Note over mu: +0.010s step 1 begins: mu plugin add sim",
      "  Note over plugin: plugin process 1 starts, pid 7",
      "  mu->>plugin: +0.020s initialize id 1",
      "  plugin-->>mu: +0.030s result id 1",
      "  Note over mu: +0.100s step 1 ends",
      "  Note over mu: +0.200s step 2 begins: mu host exec box",
      "  Note over plugin: plugin process 2 starts (its ids begin again at 1), pid 9",
      "  mu->>plugin: +0.250s initialize id 1",
      "  Note over mu: +0.400s step 2 ends",
    ]);
  });

  it("a scenario with no plugin traffic says so instead of an empty diagram", () => {
    const doc = sequenceDoc({ ...base, scenario });
    expect(doc).toContain("No plugin traffic");
    expect(doc).not.toContain("mermaid");
  });

  it("a file the virtual engine ran says what that engine keeps and what it does not, never 'no plugin traffic'", () => {
    const doc = sequenceDoc({
      ...base,
      scenario,
      steps: [
        { step: "mu plugin add sim", ok: true, exit: 0, signal: null },
        { step: "mu host acquire", ok: true, exit: null, signal: "SIGKILL" },
      ],
      virtual: {
        counts: { in: { "host.acquire": 2, initialize: 1 }, out: {} },
        virtualMs: 3_600_000,
      },
    });
    expect(doc).not.toContain("No plugin traffic");
    expect(doc).not.toContain("mermaid");
    expect(doc).toContain("Run on the virtual engine");
    expect(doc).toContain("keeps neither their order nor what mu printed");
    expect(doc).toContain("2. `mu host acquire`: killed by SIGKILL");
    expect(doc).toContain("| mu to plugin | `host.acquire` | 2 |");
  });

  it("the progress line never ends in an empty 'running'", () => {
    expect(progressLine(3, 5, 1, [])).toBe("[3/5] 2 passed, 1 failed");
    expect(progressLine(3, 5, 0, ["a/b"])).toBe("[3/5] 3 passed, 0 failed; running a/b");
  });

  it.each([
    ["dist/sim/runner/main.js"],
    ["dist/sim/virtual/explore-main.js"],
    ["dist/sim/trace/from-trace-main.js"],
  ])(
    "%s answers --help with its usage and an unknown option with one usage line (exit 2)",
    (file) => {
      const run = (arg: string) =>
        spawnSync(process.execPath, [join(packageRoot(), file), arg], { encoding: "utf8" });
      const help = run("--help");
      expect(help.stdout).toMatch(/^usage: /);
      expect(help.status).toBe(0);
      // Every flag the usage line names has a line of its own that gives its default.
      const [usage, ...rest] = help.stdout.split("\n");
      const flags = [...new Set([...(usage ?? "").matchAll(/--([a-z-]+)/g)].map((m) => m[1]))];
      expect(flags.length).toBeGreaterThan(0);
      for (const flag of flags) {
        const line = rest.find((l) => l.startsWith(`  --${flag} `) || l === `  --${flag}`);
        expect(line, `--${flag}`).toMatch(/\(default: [^)]+\)$/);
      }
      const bad = run("--bogus");
      expect(bad.stderr).toMatch(/^[\w:-]+: usage: Unknown option '--bogus'; usage: [^\n]*\n$/);
      expect(bad.status).toBe(2);
    },
  );
});

describe("the sim's declaration overrides", () => {
  it("deep-merges and deletes with null", () => {
    expect(merge({ a: { b: 1, c: 2 }, d: 3 }, { a: { c: null, e: 4 }, d: null })).toEqual({
      a: { b: 1, e: 4 },
    });
  });
});

describe("the order a run takes its files in", () => {
  it("longest first by the run kept in git when the reports hold no timings (a clone's first run, CI, the bench)", () => {
    const all = findScenarioFiles(join(packageRoot(), "scenarios")).map(loadScenario);
    const kept = JSON.parse(
      readFileSync(join(packageRoot(), "scenarios/timings.json"), "utf8"),
    ) as Record<string, number>;
    const empty = mkdtempSync(join(tmpdir(), "mu-runner-"));
    try {
      const order = longestFirst(all, empty).map((s) => s.scenario);
      const timed = order.filter((id) => kept[id] !== undefined);
      // Every kept file in the order of its kept time, longest first.
      const times = timed.map((id) => kept[id] as number);
      expect(times).toEqual([...times].sort((a, b) => b - a));
      // A file the kept run has no time for is still run.
      expect(order.length).toBe(all.length);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});

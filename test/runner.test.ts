import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { RULE_TABLE } from "../host/effects/rule-table.js";
import { merge } from "../sim/plugin/declaration.js";
import type { ScenarioResult } from "../sim/runner/execute.js";
import { loadScenario } from "../sim/runner/load.js";
import { markdown, mermaid } from "../sim/runner/report.js";

describe("scenario files", () => {
  it("a bad file is reported with its path and the failing field, never run", () => {
    const dir = mkdtempSync(join(tmpdir(), "mu-runner-"));
    try {
      const file = join(dir, "bad.yaml");
      writeFileSync(
        file,
        "scenario: x\nabout: y\nproves: [a]\nsteps:\n  - mu: --version\n    exitt: 0\n",
      );
      expect(() => loadScenario(file)).toThrow(new RegExp(`^${file}: does not match .*/steps/0`));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("reports", () => {
  const result = (id: string, proves: string[], ok: boolean): ScenarioResult => ({
    scenario: { scenario: id, about: "", proves, steps: [], file: "" },
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
});

describe("the sim's declaration overrides", () => {
  it("deep-merges and deletes with null", () => {
    expect(merge({ a: { b: 1, c: 2 }, d: 3 }, { a: { c: null, e: 4 }, d: null })).toEqual({
      a: { b: 1, e: 4 },
    });
  });
});

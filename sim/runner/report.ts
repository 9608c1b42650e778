import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ScenarioResult } from "./execute.js";

function xml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function junit(results: ScenarioResult[]): string {
  const failed = results.filter((r) => !r.ok).length;
  const secs = results.reduce((a, r) => a + r.ms, 0) / 1000;
  const cases = results.map((r) => {
    const head = `  <testcase classname="scenarios" name="${xml(r.scenario.scenario)}" time="${(r.ms / 1000).toFixed(3)}"`;
    if (r.ok) return `${head}/>`;
    return `${head}>\n    <failure message="${xml(r.failure ?? "failed")}"/>\n  </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuite name="mu scenarios" tests="${results.length}" failures="${failed}" time="${secs.toFixed(3)}">`,
    ...cases,
    "</testsuite>",
    "",
  ].join("\n");
}

/** Which rule-table rows and decisions each scenario is evidence for. */
export function coverage(
  results: ScenarioResult[],
): Map<string, { passed: string[]; failed: string[] }> {
  const rows = new Map<string, { passed: string[]; failed: string[] }>();
  for (const r of results) {
    for (const id of r.scenario.proves) {
      const row = rows.get(id) ?? { passed: [], failed: [] };
      (r.ok ? row.passed : row.failed).push(r.scenario.scenario);
      rows.set(id, row);
    }
  }
  return new Map([...rows].sort(([a], [b]) => a.localeCompare(b)));
}

export function markdown(results: ScenarioResult[]): string {
  const passed = results.filter((r) => r.ok).length;
  const lines = [
    "# mu scenarios",
    "",
    `${passed} of ${results.length} scenarios passed.`,
    "",
    "| scenario | result | ms | proves |",
    "|---|---|---|---|",
    ...results.map(
      (r) =>
        `| ${r.scenario.scenario} | ${r.ok ? "pass" : `**FAIL**: ${r.failure}`} | ${r.ms} | ${r.scenario.proves.join(", ")} |`,
    ),
    "",
    "## Coverage",
    "",
    "| row or decision | proved by | failing |",
    "|---|---|---|",
    ...[...coverage(results)].map(
      ([id, c]) => `| ${id} | ${c.passed.join(", ") || "-"} | ${c.failed.join(", ") || "-"} |`,
    ),
    "",
  ];
  return lines.join("\n");
}

export function writeReports(dir: string, results: ScenarioResult[]): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "scenarios.md"), markdown(results));
  writeFileSync(join(dir, "scenarios.junit.xml"), junit(results));
  const each = join(dir, "scenarios");
  mkdirSync(each, { recursive: true });
  for (const r of results) {
    const name = r.scenario.scenario.replace(/\//g, "__");
    writeFileSync(
      join(each, `${name}.steps.ndjson`),
      `${r.steps.map((s) => JSON.stringify(s)).join("\n")}\n`,
    );
  }
}

import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RULE_TABLE } from "../../host/effects/rule-table.js";
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
  const cov = coverage(results);
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
    "## Replay rule table",
    "",
    "Every row of host/effects/rule-table.ts, with the scenarios that prove it.",
    "",
    "| row | effects | situation | proved by | failing |",
    "|---|---|---|---|---|",
    ...RULE_TABLE.map((row) => {
      const c = cov.get(row.id);
      const by = c?.passed.join(", ") || "**gap**";
      return `| ${row.id} | ${row.effects.join(", ")} | ${row.situation} | ${by} | ${c?.failed.join(", ") || "-"} |`;
    }),
    "",
    `${RULE_TABLE.filter((r) => !cov.get(r.id)?.passed.length).length} of ${RULE_TABLE.length} rows have no passing scenario yet.`,
    "",
    "## Other rules and decisions",
    "",
    "| id | proved by | failing |",
    "|---|---|---|",
    ...[...cov]
      .filter(([id]) => !RULE_TABLE.some((r) => r.id === id))
      .map(
        ([id, c]) => `| ${id} | ${c.passed.join(", ") || "-"} | ${c.failed.join(", ") || "-"} |`,
      ),
    "",
  ];
  return lines.join("\n");
}

/** A Mermaid sequence diagram of what crossed the wire, for a person to read at a glance. */
export function mermaid(transcript: unknown[]): string {
  const lines = [
    "sequenceDiagram",
    "  participant mu",
    "  participant plugin as mu-plugin-sim",
    "  participant world",
  ];
  for (const raw of transcript) {
    const e = raw as { dir: string; msg: Record<string, unknown> };
    const m = e.msg;
    const label = (
      typeof m.method === "string"
        ? `${m.method}${m.id !== undefined ? ` #${m.id}` : ""}`
        : "invalid" in m
          ? `INVALID ${String(m.invalid)}`
          : "error" in m
            ? `error #${String(m.id)} ${String((m.error as { data?: { kind?: string } })?.data?.kind ?? "")}`
            : "id" in m
              ? `result #${String(m.id)}`
              : Object.keys(m).join(",")
    ).replace(/[;#]/g, (c) => (c === "#" ? "id " : ","));
    if (e.dir === "in") lines.push(`  mu->>plugin: ${label}`);
    else if (e.dir === "out") lines.push(`  plugin-->>mu: ${label}`);
    else lines.push(`  Note over plugin,world: ${label}`);
  }
  return `${lines.join("\n")}\n`;
}

export function writeReports(base: string, results: ScenarioResult[]): string {
  const runId = new Date().toISOString().replace(/[:.]/g, "-");
  const dir = join(base, runId);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "summary.md"), markdown(results));
  writeFileSync(join(dir, "junit.xml"), junit(results));
  for (const r of results) {
    const each = join(dir, r.scenario.scenario);
    mkdirSync(each, { recursive: true });
    writeFileSync(
      join(each, "steps.ndjson"),
      `${r.steps.map((s) => JSON.stringify(s)).join("\n")}\n`,
    );
    writeFileSync(
      join(each, "transcript.ndjson"),
      r.transcript.map((t) => `${JSON.stringify(t)}\n`).join(""),
    );
    writeFileSync(
      join(each, "sequence.md"),
      `# ${r.scenario.scenario}\n\n\`\`\`mermaid\n${mermaid(r.transcript)}\`\`\`\n`,
    );
  }
  const latest = join(base, "latest");
  rmSync(latest, { force: true });
  symlinkSync(runId, latest);
  return dir;
}

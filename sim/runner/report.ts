import { mkdirSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { RULE_TABLE } from "../../host/effects/rule-table.js";
import type { ScenarioResult, StepRecord } from "./execute.js";
import { cut, journalLines, stepEnd, virtualSequence, worldNote } from "./report-notes.js";

/** Text that stays inside one Markdown table cell. */
const cell = (s: string) => s.replace(/\|/g, "\\|").replace(/\n/g, " ");

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

/**
 * The run's summary. A filtered run (`filtered`) says of a rule row none of
 * its scenarios proved that it was not run, not that it has no proof.
 */
export function markdown(results: ScenarioResult[], filtered = false): string {
  const cov = coverage(results);
  const none = filtered ? "not run in this run" : "**gap**";
  const unproved = RULE_TABLE.filter((r) => !cov.get(r.id)?.passed.length).length;
  const passed = results.filter((r) => r.ok).length;
  const lines = [
    "# mu scenarios",
    "",
    `${passed} of ${results.length} scenarios passed.`,
    "",
    "Each scenario links to its folder: `steps.ndjson`, `transcript.ndjson` (not for a file the virtual engine ran: it keeps none), `sequence.md`.",
    "",
    "| scenario | result | ms | proves | about |",
    "|---|---|---|---|---|",
    ...results.map(
      (r) =>
        `| [${r.scenario.scenario}](${r.scenario.scenario}/) | ${r.ok ? "pass" : `**FAIL**: ${cell(r.failure ?? "")}`} | ${r.ms} | ${r.scenario.proves.join(", ")} | ${cell(r.scenario.about)} |`,
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
      const by = c?.passed.join(", ") || (c ? "**gap**" : none);
      return `| ${row.id} | ${row.effects.join(", ")} | ${row.situation} | ${by} | ${c?.failed.join(", ") || "-"} |`;
    }),
    "",
    filtered
      ? `A filtered run: ${RULE_TABLE.length - unproved} of ${RULE_TABLE.length} rows were proved by the scenarios it ran; run them all for the whole table.`
      : `${unproved} of ${RULE_TABLE.length} rows have no passing scenario yet.`,
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

interface Entry {
  t?: number;
  pid?: number;
  dir: string;
  msg: Record<string, unknown>;
}

/** Where a transcript entry stands: ms since the scenario began, the step then running, which plugin process. */
export interface Placed {
  ms: number | null;
  step: number | null;
  plugin: number | null;
}

/**
 * Places each transcript entry: time relative to the scenario's start, the
 * 1-based step running when it crossed, and which plugin process (1, 2, …)
 * carried it, since every restart's initialize is id 1 again.
 */
export function place(transcript: unknown[], steps: StepRecord[], t0?: number): Placed[] {
  const pids: number[] = [];
  return (transcript as Entry[]).map((e) => {
    let plugin: number | null = null;
    if (typeof e.pid === "number") {
      if (!pids.includes(e.pid)) pids.push(e.pid);
      plugin = pids.indexOf(e.pid) + 1;
    }
    const t = typeof e.t === "number" ? e.t : undefined;
    const at =
      t === undefined
        ? -1
        : steps.findIndex((s) => (s.startedAt ?? Infinity) <= t && t <= (s.endedAt ?? -Infinity));
    return {
      ms: t !== undefined && t0 !== undefined ? t - t0 : null,
      step: at === -1 ? null : at + 1,
      plugin,
    };
  });
}

const noteText = (s: string) =>
  s.replace(/[;#\n]/g, (c) => (c === "#" ? "id " : c === ";" ? "," : " "));

const secs = (ms: number | null) => (ms === null ? "" : `+${(ms / 1000).toFixed(3)}s `);

/**
 * A Mermaid sequence diagram of what crossed the wire, for a person to read
 * at a glance: each mu step's start and end, time since the scenario began,
 * and each plugin process's start marked, so a restart's id 1 is not taken
 * for the first one's.
 */
export function mermaid(
  transcript: unknown[],
  steps: StepRecord[] = [],
  t0?: number,
  crashAt: readonly (string | undefined)[] = [],
): string {
  const lines = [
    "sequenceDiagram",
    "  participant mu",
    "  participant plugin as mu-plugin-sim",
    "  participant world",
  ];
  const placed = place(transcript, steps, t0);
  const rel = (t: number | undefined) => (t === undefined || t0 === undefined ? null : t - t0);
  let stepOpen = 0; // steps begun so far
  let stepsClosed = 0;
  let plugins = 0;
  // Step boundaries up to time t, in time order (a step ends before the next begins).
  const openStepsUpTo = (t: number) => {
    for (;;) {
      const begin = steps[stepOpen]?.startedAt ?? Infinity;
      const end = stepsClosed < stepOpen ? (steps[stepsClosed]?.endedAt ?? Infinity) : Infinity;
      if (end <= t && end < Infinity && end <= begin) {
        const s = steps[stepsClosed];
        stepsClosed++;
        lines.push(
          `  Note over mu: ${secs(rel(end))}step ${stepsClosed} ends${noteText(stepEnd(s, crashAt[stepsClosed - 1]))}`,
        );
        for (const j of journalLines(s)) lines.push(`  Note over mu: ${noteText(cut(j))}`);
      } else if (stepOpen < steps.length && begin <= t) {
        const s = steps[stepOpen] as StepRecord;
        stepOpen++;
        lines.push(
          `  Note over mu: ${secs(rel(begin))}step ${stepOpen} begins: ${noteText(s.step)}`,
        );
      } else return;
    }
  };
  for (const [i, raw] of (transcript as Entry[]).entries()) {
    const e = raw;
    const where = placed[i] as Placed;
    if (typeof e.t === "number") openStepsUpTo(e.t);
    if (where.plugin !== null && where.plugin > plugins) {
      plugins = where.plugin;
      const what =
        plugins === 1
          ? "plugin process 1 starts"
          : `plugin process ${plugins} starts (its ids begin again at 1)`;
      lines.push(`  Note over plugin: ${what}, pid ${e.pid}`);
    }
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
              : worldNote(m)
    ).replace(/[;#]/g, (c) => (c === "#" ? "id " : ","));
    const text = `${secs(where.ms)}${label}`;
    if (e.dir === "in") lines.push(`  mu->>plugin: ${text}`);
    else if (e.dir === "out") lines.push(`  plugin-->>mu: ${text}`);
    else lines.push(`  Note over plugin,world: ${text}`);
  }
  openStepsUpTo(Infinity);
  return `${lines.join("\n")}\n`;
}

/** sequence.md: the diagram, or a plain sentence when the plugin was never spoken to. */
export function sequenceDoc(r: ScenarioResult): string {
  const head = `# ${r.scenario.scenario}\n\n${r.scenario.about}\n\n`;
  if (r.virtual) return `${head}${virtualSequence(r)}`;
  if (r.transcript.length === 0) {
    return `${head}No plugin traffic: no step of this scenario started the plugin, so there is no exchange to draw.\n`;
  }
  const crashAt = r.scenario.steps.map((s) =>
    "mu" in s ? (s.env as Record<string, string> | undefined)?.MU_CRASH_AT : undefined,
  );
  return `${head}\`\`\`mermaid\n${mermaid(r.transcript, r.steps, r.startedAt, crashAt)}\`\`\`\n`;
}

/** The live progress line; between one scenario's end and the next's start nothing runs, and it says nothing of it. */
export function progressLine(
  done: number,
  total: number,
  failed: number,
  running: Iterable<string>,
): string {
  const names = [...running];
  const now = names.length > 0 ? `; running ${names.join(", ")}` : "";
  return `[${done}/${total}] ${done - failed} passed, ${failed} failed${now}`;
}

export function writeReports(base: string, results: ScenarioResult[], filtered = false): string {
  const runId = new Date().toISOString().replace(/[:.]/g, "-");
  const dir = join(base, runId);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "summary.md"), markdown(results, filtered));
  writeFileSync(join(dir, "junit.xml"), junit(results));
  for (const r of results) {
    const each = join(dir, r.scenario.scenario);
    mkdirSync(each, { recursive: true });
    writeFileSync(
      join(each, "steps.ndjson"),
      `${r.steps.map((s) => JSON.stringify(s)).join("\n")}\n`,
    );
    const placed = place(r.transcript, r.steps, r.startedAt);
    // The virtual engine keeps no transcript: an empty file would read as "nothing crossed".
    if (!r.virtual)
      writeFileSync(
        join(each, "transcript.ndjson"),
        r.transcript
          .map((t, i) => `${JSON.stringify({ ...(placed[i] as Placed), ...(t as object) })}\n`)
          .join(""),
      );
    writeFileSync(join(each, "sequence.md"), sequenceDoc(r));
  }
  const latest = join(base, "latest");
  rmSync(latest, { force: true });
  symlinkSync(runId, latest);
  return dir;
}

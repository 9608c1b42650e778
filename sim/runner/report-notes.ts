import type { ScenarioResult, StepRecord } from "./execute.js";

// The notes a sequence diagram carries besides the messages: what the world
// noted, how each step ended, and the journal lines mu printed.

export const cut = (s: string, n = 160) => (s.length > n ? `${s.slice(0, n - 1)}…` : s);

/** What the world noted, in words: the keys alone would read alike for opposite facts. */
export function worldNote(m: Record<string, unknown>): string {
  if (m.eof === true)
    return m.ignored === true
      ? "the plugin saw stdin's end (EOF) and ignores it, as its fault says"
      : "the plugin saw stdin's end (EOF) and winds down";
  if ("escaped" in m) return `a helper left the plugin's process group, pid ${String(m.escaped)}`;
  if ("groupHelper" in m)
    return `a helper stays in the plugin's group, pid ${String(m.groupHelper)}`;
  if ("muSlip" in m) return `mu slipped: ${String(m.muSlip)}`;
  if ("wrongReply" in m)
    return `the plugin answers wrongly, as its fault says: ${String(m.wrongReply)}`;
  if ("proxied" in m) {
    const p = m.proxied as { code?: unknown; signal?: unknown };
    return `the real plugin behind the proxy ended: ${p.signal ? `signal ${String(p.signal)}` : `exit ${String(p.code)}`}`;
  }
  if ("proxyCannot" in m) return `the proxy cannot apply a ${String(m.proxyCannot)} fault`;
  if ("fetched" in m) {
    const f = m.fetched as { machine?: unknown; remoteCwd?: unknown; sha?: unknown };
    return `the fetch brought ${String(f.sha)}, the HEAD of ${String(f.machine)}:${String(f.remoteCwd)}`;
  }
  if ("unparseable" in m) return `a line that does not parse: ${cut(String(m.unparseable), 60)}`;
  return Object.entries(m)
    .map(([k, v]) => `${k} ${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(", ");
}

/** How a step ended, as a person reads it: its exit or signal, and any crash point it ran with. */
export function stepEnd(s: StepRecord | undefined, crashAt: string | undefined): string {
  if (!s || (s.exit === undefined && !s.signal)) return "";
  const how = s.signal ? `killed by ${s.signal}` : `exit ${String(s.exit)}`;
  return crashAt ? `: ${how} (crash point ${crashAt})` : `: ${how}`;
}

/** The journal lines mu printed: the settling of an intent is what a crash scenario is about. */
export const journalLines = (s: StepRecord | undefined) =>
  (s?.stderr ?? "").split("\n").filter((l) => l.startsWith("mu: journal:"));

/**
 * sequence.md for a file the virtual engine ran. That engine counts the
 * messages that crossed but keeps neither their order nor a step's output,
 * so the page says what it has and what it lacks rather than draw a
 * diagram it cannot back.
 */
export function virtualSequence(r: ScenarioResult): string {
  const v = r.virtual;
  if (!v) return "";
  const lines = [
    ...(r.ok ? [] : [`**Failed:** ${r.failure ?? "see steps.ndjson"}`, ""]),
    "Run on the virtual engine (in one process, on virtual time: " +
      `${v.virtualMs < 1000 ? `${v.virtualMs} ms` : `${(v.virtualMs / 1000).toFixed(1)} s`} of it). That engine records each mu step's exit or signal ` +
      "and how many messages of each method crossed the wire; it keeps neither their order nor " +
      "what mu printed, so there is no diagram here and `transcript.ndjson` is not written.",
    "",
    "## mu steps",
    "",
    ...r.steps.map((s, i) => `${i + 1}. \`${s.step}\`${stepEnd(s, undefined)}`),
    "",
    "## Messages, by method",
    "",
    "| direction | method | count |",
    "|---|---|---|",
  ];
  const rows = (dir: "in" | "out", label: string) =>
    Object.entries(v.counts[dir])
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([m, n]) => `| ${label} | \`${m}\` | ${n} |`);
  const all = [...rows("in", "mu to plugin"), ...rows("out", "plugin to mu")];
  lines.push(...(all.length > 0 ? all : ["| - | no message crossed | 0 |"]));
  return `${lines.join("\n")}\n`;
}

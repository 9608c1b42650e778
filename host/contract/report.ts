import type { Cleanup, Verdict } from "./verdict.js";

// The checklist three ways: lines for a person, JSON for a script, JUnit for
// a CI page.

const MARK: Record<Verdict["result"], string> = { pass: "ok  ", fail: "FAIL", skip: "skip" };
const ID_WIDTH = 17;

/** A person needs the first few pieces of evidence; --json keeps them all. */
const SHOW_EVIDENCE = 8;

export function line(v: Verdict): string {
  const head = `${MARK[v.result]}  ${v.id.padEnd(ID_WIDTH)} ${v.detail}`;
  const shown = v.evidence.slice(0, SHOW_EVIDENCE);
  const more = v.evidence.length - shown.length;
  if (more > 0) shown.push(`… and ${more} more (--json lists them all)`);
  return [head, ...shown.map((e) => `        ${e}`)].join("\n");
}

export function summary(name: string, vs: readonly Verdict[]): string {
  const n = (r: Verdict["result"]) => vs.filter((v) => v.result === r).length;
  return `${name}: ${n("pass")} passed, ${n("fail")} failed, ${n("skip")} skipped`;
}

/** What the run removed again, and what it could not, each with the command that removes it. */
export function cleanupLines(c: Cleanup): string[] {
  return [
    ...c.removed.map((r) => `cleaned: ${r}`),
    ...c.left.map((l) => `left:    ${l.what}${l.command ? `; remove it with: ${l.command}` : ""}`),
  ];
}

const xml = (s: string) =>
  s
    .replace(/[^\t\n\r\x20-\uD7FF\uE000-\uFFFD]/gu, "\uFFFD")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");

const secs = (ms: number) => (ms / 1000).toFixed(3);

export function junit(name: string, vs: readonly Verdict[]): string {
  const failures = vs.filter((v) => v.result === "fail").length;
  const skipped = vs.filter((v) => v.result === "skip").length;
  const total = secs(vs.reduce((t, v) => t + v.ms, 0));
  const suite = `plugin:${name}`;
  const cases = vs.map((v) => {
    const open = `    <testcase classname="${xml(suite)}" name="${xml(v.id)}" time="${secs(v.ms)}"`;
    if (v.result === "pass") return `${open}/>`;
    if (v.result === "skip")
      return `${open}>\n      <skipped message="${xml(v.detail)}"/>\n    </testcase>`;
    return `${open}>\n      <failure message="${xml(v.detail)}">${xml(v.evidence.join("\n"))}</failure>\n    </testcase>`;
  });
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="mu plugin check" tests="${vs.length}" failures="${failures}" skipped="${skipped}" time="${total}">`,
    `  <testsuite name="${xml(suite)}" tests="${vs.length}" failures="${failures}" skipped="${skipped}" time="${total}">`,
    ...cases,
    "  </testsuite>",
    "</testsuites>",
    "",
  ].join("\n");
}

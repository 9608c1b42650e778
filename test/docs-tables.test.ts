import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { CRASH_POINTS } from "../host/crash-point.js";
import { EXIT } from "../host/errors.js";
import { packageRoot } from "../host/package-root.js";

// The docs mirror two tables the code owns: the exit codes and the crash
// points. A row added on one side only fails here.

const read = (f: string) => readFileSync(join(packageRoot(), f), "utf8");

/** The first column of the markdown table that follows `heading`. */
function firstColumn(file: string, heading: string): string[] {
  const text = read(file);
  const at = text.indexOf(`\n${heading}\n`);
  expect(at, `${file} has no "${heading}"`).toBeGreaterThan(-1);
  const rows = text
    .slice(at + heading.length + 2)
    .split("\n")
    .filter((l, i, all) => l.startsWith("|") && all.slice(0, i).every((p) => !p.startsWith("## ")));
  return rows.slice(2).map((r) => (r.split("|")[1] ?? "").trim());
}

it("docs/cli.md's exit-code table lists exactly mu's exit codes", () => {
  const codes = firstColumn("docs/cli.md", "## Exit codes").flatMap((c) =>
    c.split(",").map((n) => Number(n.trim())),
  );
  const signals = [129, 130, 143];
  expect(codes.filter((c) => !signals.includes(c)).sort()).toEqual(Object.values(EXIT).sort());
});

it("docs/testbed.md's crash-point table lists exactly the points in host/crash-point.ts", () => {
  const inCode = Object.keys(CRASH_POINTS);
  const inDocs = firstColumn("docs/testbed.md", "## Crash points").map((c) =>
    c.replaceAll("`", ""),
  );
  expect(inCode.length).toBeGreaterThan(3);
  expect(inDocs.sort()).toEqual(inCode.sort());
});

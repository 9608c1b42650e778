import { readFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { sourceFiles } from "./source-tree.js";

// A module a newcomer can read in one sitting: at most MAX_LINES lines, or a
// line near its top, starting `// Size:`, that says why it is longer.

const MAX_LINES = 300;
/** How far down the reason may sit: above or among the imports. */
const REASON_WITHIN = 5;

function lineCount(text: string): number {
  return text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
}

const hasReason = (text: string) =>
  text
    .split("\n")
    .slice(0, REASON_WITHIN)
    .some((l) => /^\/\/ Size: \S/.test(l));

it(`keeps every module of host/, sim/ and plugins/ to ${MAX_LINES} lines or says why`, () => {
  const over: string[] = [];
  for (const f of sourceFiles(["host", "sim", "plugins"])) {
    const text = readFileSync(join(packageRoot(), f), "utf8");
    const ok = lineCount(text) <= MAX_LINES || hasReason(text);
    if (!ok) over.push(`${f}: ${lineCount(text)} lines, no "// Size:" reason`);
  }
  expect(over).toEqual([]);
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { checkTrace, readTraces, traceDirOf } from "../sim/runner/trace-expect.js";

// An expect step's `trace` must be able to fail: a pattern no line holds,
// a line a `lacks` pattern finds, and a scenario that traced nothing.

describe("expect: trace", () => {
  const lines = ['{"t":1,"ev":"mu","argv":["host","list"]}', '{"t":2,"ev":"end","exit":0}'];

  it("passes when every holds pattern matches a line and no lacks pattern does", () => {
    expect(checkTrace(lines, { holds: ['"ev":"end","exit":0'], lacks: ["secret"] })).toEqual([]);
  });

  it("names the holds pattern no line matches, and the line a lacks pattern found", () => {
    expect(checkTrace(lines, { holds: ['"ev":"crash"'], lacks: ['"argv"'] })).toEqual([
      'no line of the trace matches "ev":"crash"',
      `a line of the trace matches "argv": ${lines[0]}`,
    ]);
  });

  it("fails a step that has no trace to look at, even with lacks alone", () => {
    expect(checkTrace([], { lacks: ["anything"] })).toEqual([
      "no step wrote a trace to look at: give the steps MU_TRACE_DIR in their env",
    ]);
    expect(checkTrace([], undefined)).toEqual([]);
  });
});

describe("the real engine's trace files", () => {
  let root: string | undefined;
  afterEach(() => {
    if (root) rmSync(root, { recursive: true, force: true });
  });

  it("are read from each traced step's directory, files in name order, other files left out", () => {
    root = mkdtempSync(join(tmpdir(), "mu-trace-expect-"));
    const dir = traceDirOf({ MU_TRACE_DIR: "trace" }, root) ?? "";
    expect(dir).toBe(join(root, "trace"));
    expect(traceDirOf({}, root)).toBeUndefined();
    mkdirSync(dir);
    writeFileSync(join(dir, "mu-2-1.ndjson"), "b\n");
    writeFileSync(join(dir, "mu-1-1.ndjson"), "a\n\n");
    writeFileSync(join(dir, "notes.txt"), "not a trace\n");
    expect(readTraces([dir, join(root, "missing")])).toEqual(["a", "b"]);
  });
});

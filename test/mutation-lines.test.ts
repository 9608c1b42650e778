import { describe, expect, it } from "vitest";
import { carryInto, lineMap, toCurrent } from "../scripts/mutation-lines.mjs";

// How a kept mutation run follows its file through an edit: results on
// unchanged lines carry, those touching a changed line go stale, and the
// ranges a new run must cover are the changed and added lines.

type Mutant = {
  id: string;
  mutatorName: string;
  replacement: string;
  status: string;
  location: { start: { line: number; column: number }; end: { line: number; column: number } };
};

const at = (id: string, from: number, to: number, status = "Killed"): Mutant => ({
  id,
  mutatorName: "EqualityOperator",
  replacement: "x",
  status,
  location: { start: { line: from, column: 2 }, end: { line: to, column: 9 } },
});

const before = ["a", "b", "c", "d", "e"].join("\n");
// c changed, a line added after d, e kept.
const after = ["a", "b", "C", "d", "new", "e"].join("\n");

describe("carrying mutation results across an edit", () => {
  it("maps each unchanged line to its new place, and a changed one to none", () => {
    expect(lineMap(before, after)).toEqual([0, 1, 2, 0, 4, 6]);
  });

  it("brings a file to today's text: unchanged lines carry, the rest is stale with its lines to run", () => {
    const entry = {
      source: before,
      mutants: [at("1", 1, 1), at("2", 3, 3, "Survived"), at("3", 5, 5), at("4", 2, 4)],
    };
    const now = toCurrent(entry, after);
    expect(
      now.entry.mutants.map((m: Mutant) => [
        m.id,
        m.location.start.line,
        m.location.end.line,
        m.status,
      ]),
    ).toEqual([
      ["1", 1, 1, "Killed"],
      ["2", 3, 3, "Stale"],
      ["3", 6, 6, "Killed"],
      ["4", 2, 4, "Stale"],
    ]);
    expect(now.stale).toBe(2);
    // Line 3 changed and line 5 added; mutant 4 straddles the change, so a
    // run that makes it again covers its whole span.
    expect(now.ranges).toEqual([
      [3, 3],
      [5, 5],
    ]);
    expect(now.whole).toEqual([[2, 5]]);
  });

  it("merges a run over some lines of the edited file with the earlier results it did not run", () => {
    const earlier = {
      source: before,
      mutants: [at("1", 1, 1), at("2", 3, 3, "Survived"), at("3", 5, 5), at("4", 4, 5)],
    };
    // A run over lines 3 and 5 to 6 of today's file.
    const later = {
      source: after,
      ranges: [
        [3, 3],
        [5, 6],
      ],
      mutants: [at("9", 3, 3), at("8", 6, 6, "Survived")],
    };
    const merged = carryInto(earlier, later);
    // The later run's own result for line 6 (e) wins over the earlier kill
    // there; line 1 carries; the earlier survivor on the changed line is
    // gone; mutant 4 spanned d and e, which an added line now parts: stale,
    // and the run over 5-6 did not cover its span 4-6.
    expect(merged.mutants.map((m: Mutant) => [m.id, m.location.start.line, m.status])).toEqual([
      ["9", 3, "Killed"],
      ["8", 6, "Survived"],
      ["1", 1, "Killed"],
      ["4", 4, "Stale"],
    ]);
    expect(merged.ranges).toBeUndefined();
  });
});

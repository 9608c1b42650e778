import { describe, expect, it } from "vitest";
import {
  classify,
  EXIT,
  firstLine,
  NotFoundError,
  RefusedError,
  UsageError,
} from "../host/errors.js";

// Every failure ends in one line and a documented exit code (docs/cli.md).
// What mu did not expect is the one kind it cannot word: it says so, with
// the first line of what was thrown, so a stack or a page of text never
// reaches the user's terminal.

describe("classify", () => {
  it("gives mu's own errors their line and exit code", () => {
    const err = new RefusedError("x.y", "host", "box is busy", { hint: "wait for it" });
    expect(classify(err)).toEqual({
      exit: EXIT.refused,
      line: "mu: host: box is busy; wait for it",
    });
    expect(classify(new NotFoundError("n", "agent", "no agent a"))).toEqual({
      exit: 3,
      line: "mu: agent: no agent a",
    });
    expect(classify(new UsageError("u", "usage", "bad")).exit).toBe(2);
  });

  it("calls anything else a bug in mu, in one line, exit 5", () => {
    expect(classify(new TypeError("x is not a function\n    at f (a.js:1:2)"))).toEqual({
      exit: EXIT.unavailable,
      line: "mu: internal: x is not a function; this is a bug in mu, please report it",
    });
    expect(classify("a thrown string")).toEqual({
      exit: 5,
      line: "mu: internal: a thrown string; this is a bug in mu, please report it",
    });
  });

  it("cuts what was thrown at 400 characters", () => {
    const line = classify(new Error("y".repeat(1000))).line;
    expect(line).toBe(`mu: internal: ${"y".repeat(400)}; this is a bug in mu, please report it`);
  });
});

describe("firstLine", () => {
  it("keeps the text before the first newline, at most max characters", () => {
    expect(firstLine("one\ntwo\nthree")).toBe("one");
    expect(firstLine("\nsecond")).toBe("");
    expect(firstLine("no newline")).toBe("no newline");
    expect(firstLine("abcdef", 3)).toBe("abc");
    expect(firstLine("abc", 3)).toBe("abc");
    expect(firstLine(`${"z".repeat(400)}\nmore`)).toBe("z".repeat(400));
  });
});

import { describe, expect, it } from "vitest";
import { FirstLine } from "../host/plugin/stderr-line.js";
import { Redactor } from "../host/trace/redact.js";

describe("a plugin's first stderr line", () => {
  it("joins a UTF-8 character split across two writes", () => {
    const bytes = Buffer.from("erreur: fichier protégé ✓\nsecond\n", "utf8");
    const at = bytes.indexOf(0xa9); // the middle of "é"
    const l = new FirstLine();
    l.push(bytes.subarray(0, at));
    l.push(bytes.subarray(at, at + 1));
    l.push(bytes.subarray(at + 1, at + 24));
    l.push(bytes.subarray(at + 24));
    expect(l.line).toBe("erreur: fichier protégé ✓");
  });
});

describe("a cut stderr line's secrets", () => {
  const r = new Redactor({ GH_TOKEN: "ghp-token-0001", API_KEY: "key-value-0002" }, false);

  it("says whether the line ran on past what it keeps", () => {
    const l = new FirstLine(10);
    l.push(Buffer.from("0123456789"));
    expect(l.cut).toBe(false);
    l.push(Buffer.from("a\n"));
    expect([l.line, l.cut]).toEqual(["0123456789", true]);
  });

  it("masks the end of a cut line that starts a secret, the longest such end", () => {
    expect(r.maskCut("ghp-token-0001 then key-val")).toBe("[masked] then [masked]");
    expect(r.maskCut("plain words k")).toBe("plain words [masked]");
    expect(r.maskCut("plain words")).toBe("plain words");
  });
});

import { describe, expect, it } from "vitest";
import { FirstLine } from "../host/plugin/stderr-line.js";

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

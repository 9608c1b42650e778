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

  it("says whether it holds the whole line: a newline ended it within what is kept", () => {
    const l = new FirstLine(10);
    l.push(Buffer.from("0123456789"));
    expect(l.whole).toBe(false);
    l.push(Buffer.from("a\n"));
    expect([l.line, l.whole]).toEqual(["0123456789", false]);
    const whole = new FirstLine(10);
    whole.push(Buffer.from("012345678\r\nmore"));
    expect([whole.line, whole.whole]).toEqual(["012345678", true]);
  });

  it("masks the end of a held start that begins a secret, the longest such end", () => {
    expect(r.maskCut("ghp-token-0001 then key-val")).toBe("[masked] then [masked]");
    expect(r.maskCut("plain words k")).toBe("plain words [masked]");
    expect(r.maskCut("plain words")).toBe("plain words");
  });

  it("masks a start whose own first characters are a shorter secret, and overlapping secrets as one", () => {
    const nested = new Redactor(
      { A_KEY: "pfx-secret-aaaa", B_KEY: "pfx-secret-aaaa-tail-bbbb" },
      false,
    );
    expect(nested.maskCut("seen: pfx-secret-aaaa-tail-b")).toBe("seen: [masked]");
    expect(nested.maskCut("seen: pfx-secret-aaaa, then")).toBe("seen: [masked], then");
    const overlap = new Redactor({ A_KEY: "abcd-1234", B_KEY: "1234-wxyz" }, false);
    expect(overlap.maskCut("x abcd-1234-wxyz y")).toBe("x [masked] y");
  });
});

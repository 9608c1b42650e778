import { describe, expect, it } from "vitest";
import { wholeChars } from "../plugins/ssh/channel.js";

// The ssh plugin keeps the first 64 KiB of a turn's output as lastText: a
// cut inside a character came out as U+FFFD at the end (found trying mu
// over ssh). The cut moves back to the character's start instead.

const dec = (b: Uint8Array) => new TextDecoder().decode(b);

describe("lastText cut at a byte count", () => {
  it.each([
    ["é", 1],
    ["€", 1],
    ["€", 2],
    ["𝄞", 1],
    ["𝄞", 3],
  ])("drops a partial %s cut after %i byte(s)", (ch, keep) => {
    const whole = new TextEncoder().encode(`ab${ch}`);
    const cut = whole.subarray(0, 2 + keep);
    expect(dec(wholeChars(cut))).toBe("ab");
  });

  it.each(["abc", "abé", "ab€", "ab𝄞", ""])("keeps %j whole", (text) => {
    const b = new TextEncoder().encode(text);
    expect(dec(wholeChars(b))).toBe(text);
  });

  it.each([
    ["\u0800", 1],
    ["\u0800", 2],
  ])(
    "drops a partial %s, whose lead byte is the lowest of three, cut after %i byte(s)",
    (ch, keep) => {
      const whole = new TextEncoder().encode(`ab${ch}`);
      expect(dec(wholeChars(whole.subarray(0, 2 + keep)))).toBe("ab");
    },
  );

  it("drops a character cut at the very start of the bytes", () => {
    expect(dec(wholeChars(new TextEncoder().encode("€").subarray(0, 2)))).toBe("");
  });

  it("drops a lone lead byte at the end, the lowest of two included", () => {
    expect(dec(wholeChars(Uint8Array.from([0x61, 0x62, 0xc0])))).toBe("ab");
  });

  it("leaves bytes that are not UTF-8 as they are", () => {
    const b = Uint8Array.from([0x61, 0x80, 0x80, 0x80, 0x80, 0x80]);
    expect(wholeChars(b)).toBe(b);
  });
});

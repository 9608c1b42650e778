import { describe, expect, it } from "vitest";
import { encodeLine, LineFramer, MAX_LINE_BYTES } from "../host/plugin/framing.js";

const enc = (s: string) => Buffer.from(s, "utf8");

describe("LineFramer", () => {
  it("splits lines across and within chunks", () => {
    const f = new LineFramer();
    expect(f.push(enc('{"a":1}\n{"b"'))).toEqual([{ line: '{"a":1}' }]);
    expect(f.push(enc(":2}\n\n"))).toEqual([{ line: '{"b":2}' }, { line: "" }]);
    expect(f.pending()).toBe(0);
  });

  it("keeps a multi-byte character split between chunks", () => {
    const f = new LineFramer();
    const bytes = enc('"é"\n');
    expect(f.push(bytes.subarray(0, 2))).toEqual([]);
    expect(f.push(bytes.subarray(2))).toEqual([{ line: '"é"' }]);
  });

  it("refuses invalid UTF-8 and then nothing more", () => {
    const f = new LineFramer();
    expect(f.push(Buffer.from([0x22, 0xff, 0x22, 0x0a]))).toEqual([
      { error: { kind: "bad-utf8" } },
    ]);
    expect(f.push(enc('{"ok":1}\n'))).toEqual([]);
  });

  it("refuses an overlong encoding rather than repairing it", () => {
    const f = new LineFramer();
    // 0xC0 0xAF is an overlong '/': invalid UTF-8.
    expect(f.push(Buffer.from([0xc0, 0xaf, 0x0a]))).toEqual([{ error: { kind: "bad-utf8" } }]);
  });

  it("accepts a line of exactly the limit and refuses one byte more", () => {
    const ok = new LineFramer();
    expect(ok.push(Buffer.concat([Buffer.alloc(MAX_LINE_BYTES, 0x20), enc("\n")]))).toHaveLength(1);
    const big = new LineFramer();
    const half = Buffer.alloc(MAX_LINE_BYTES / 2, 0x20);
    expect(big.push(half)).toEqual([]);
    expect(big.push(Buffer.concat([half, enc(" ")]))).toEqual([
      { error: { kind: "oversize", bytes: MAX_LINE_BYTES + 1 } },
    ]);
  });

  it("does not wait for a newline to refuse an oversize line", () => {
    const f = new LineFramer();
    expect(f.push(Buffer.alloc(MAX_LINE_BYTES + 10, 0x20))[0]).toMatchObject({
      error: { kind: "oversize" },
    });
  });
});

describe("encodeLine", () => {
  it("writes one line and refuses an oversize message", () => {
    expect(encodeLine({ a: "é" }).toString()).toBe('{"a":"é"}\n');
    expect(() => encodeLine({ s: "x".repeat(MAX_LINE_BYTES) })).toThrow(RangeError);
  });
});

import { describe, expect, it } from "vitest";
import { OUTPUT_CAP, parseFrame } from "../plugins/ssh/exec-frame.js";

// A run's output comes back from the remote wrapper as a framing line
// `MU-SSH-RESULT <id> <code> <stdout bytes> <stderr bytes>`, then the kept
// bytes of each stream. The plugin finds its own run's line, splits the
// streams, and fits them into one reply under the protocol's line limit,
// saying in stderr what it cut.

const frame = (id: string, code: string, out: Buffer, err: Buffer, totals?: [number, number]) =>
  Buffer.concat([
    Buffer.from(
      `MU-SSH-RESULT ${id} ${code} ${totals?.[0] ?? out.length} ${totals?.[1] ?? err.length}\n`,
    ),
    out,
    err,
  ]);

describe("parseFrame", () => {
  it("splits the streams of its own run's result", () => {
    const raw = Buffer.concat([
      Buffer.from("motd from a login script\n"),
      frame("other", "9", Buffer.from("x\n"), Buffer.from("y\n")),
      frame("r1", "0", Buffer.from("hello\n"), Buffer.from("warn\n")),
    ]);
    expect(parseFrame(raw, "r1")).toEqual({
      tag: "RESULT",
      code: "0",
      result: { exitCode: 0, stdout: "hello\n", stderr: "warn\n", partial: false },
    });
  });

  it("takes each stream's bytes as counted, whatever follows the frame", () => {
    const raw = Buffer.concat([
      frame("r", "0", Buffer.from("out"), Buffer.from("err")),
      Buffer.from("logout\n"),
    ]);
    expect(parseFrame(raw, "r")?.result).toMatchObject({ stdout: "out", stderr: "err" });
  });

  it("takes - and ? for no exit code", () => {
    for (const code of ["-", "?"])
      expect(
        parseFrame(frame("r", code, Buffer.from(""), Buffer.from("")), "r")?.result?.exitCode,
      ).toBeNull();
    expect(
      parseFrame(frame("r", "3", Buffer.from(""), Buffer.from("")), "r")?.result?.exitCode,
    ).toBe(3);
  });

  it("reports the last other line of its run when no result came", () => {
    const raw = Buffer.from("MU-SSH-STARTED r1\nMU-SSH-TIMEOUT r1 after 5\nMU-SSH-STARTED r2\n");
    expect(parseFrame(raw, "r1")).toEqual({ tag: "TIMEOUT" });
    expect(parseFrame(Buffer.from("nothing here\n"), "r1")).toBeUndefined();
  });

  it("says in stderr how much the remote cut, after a line of the script's own", () => {
    const kept = Buffer.alloc(OUTPUT_CAP, "a");
    const note = `mu-plugin-ssh: output cut (at most ${OUTPUT_CAP} bytes of each stream come back): stdout kept ${OUTPUT_CAP} of ${OUTPUT_CAP + 10} bytes, 10 cut\n`;
    for (const [err, shown] of [
      ["", note],
      ["oops", `oops\n${note}`],
      ["oops\n", `oops\n${note}`],
    ]) {
      const raw = frame("r", "1", kept, Buffer.from(err), [OUTPUT_CAP + 10, err.length]);
      const r = parseFrame(raw, "r")?.result;
      expect(r?.stderr).toBe(shown);
      expect(r?.stdout.length).toBe(OUTPUT_CAP);
      expect(r?.partial).toBe(true);
    }
  });

  it("halves stdout first when both streams are as long", () => {
    const half = Buffer.alloc(100_000, 1);
    const r = parseFrame(frame("r", "0", half, half), "r")?.result;
    expect(r?.stdout.length).toBe(50_000);
    expect(r?.stderr.startsWith("\u0001".repeat(100_000))).toBe(true);
    expect(r?.stderr).toContain(": stdout kept 50000 of 100000 bytes, 50000 cut\n");
  });

  it("halves the longer stream until the reply fits one line, and counts what it cut", () => {
    // A control byte is six bytes of JSON: 400 KiB of them cannot fit.
    const out = Buffer.alloc(OUTPUT_CAP, 1);
    const err = Buffer.alloc(300 * 1024, 1);
    const r = parseFrame(frame("r", "0", out, err), "r")?.result;
    expect(r?.stdout.length).toBe(OUTPUT_CAP / 8);
    expect(r?.stderr.startsWith("\u0001".repeat(300 * 256))).toBe(true);
    expect(r?.stderr).toContain(
      `: stdout kept ${OUTPUT_CAP / 8} of ${OUTPUT_CAP} bytes, ${(OUTPUT_CAP * 7) / 8} cut; stderr kept ${300 * 256} of ${300 * 1024} bytes, ${300 * 768} cut\n`,
    );
    expect(r?.partial).toBe(true);
  });
});

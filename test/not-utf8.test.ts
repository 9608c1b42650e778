import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { checkArgsUtf8, firstNotUtf8 } from "../host/cli/argv-utf8.js";
import { shQuote } from "../host/sh-quote.js";
import { muBin, muProcess, mutantEnv, simBoxState, type tempState } from "./helpers.js";

// Bytes that are not UTF-8 meet the same answer on every way into mu: an
// argument (a script's words, an agent's message) or a --file is refused in
// one line (exit 2); output the plugin already turned into JSON text comes
// out as it arrived, with a line saying what was replaced.

let st: ReturnType<typeof tempState>;
beforeEach(() => {
  st = simBoxState();
});
afterEach(() => st.done());

/**
 * The real binary with arguments given as bytes. Node's own spawn turns a
 * Buffer argument into a string first, so a shell puts the bytes in place.
 */
function muBytes(args: (string | Buffer)[]) {
  const word = (a: string | Buffer) =>
    typeof a === "string"
      ? shQuote(a)
      : `"$(printf '${[...a].map((b) => `\\${b.toString(8).padStart(3, "0")}`).join("")}')"`;
  const script = `exec ${shQuote(process.execPath)} ${shQuote(muBin)} ${args.map(word).join(" ")}`;
  const r = spawnSync("/bin/sh", ["-c", script], {
    env: { PATH: process.env.PATH ?? "", ...mutantEnv(), ...st.env },
    encoding: "utf8",
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

const latin1 = (s: string) => Buffer.from(s, "latin1");

describe("arguments that are not UTF-8", () => {
  it("host exec refuses a script word with such bytes in one line naming the argument (exit 2)", () => {
    const r = muBytes(["host", "exec", "box", "--", latin1("echo caf\xe9")]);
    expect(r.stderr).toBe(
      "mu: usage: argument 5 ('echo caf\\xe9') holds bytes that are not UTF-8; mu passes text on as JSON, which carries UTF-8 only: convert it (iconv -t UTF-8)\n",
    );
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
  });

  it("agent send refuses a message with such bytes the same way, before anything is looked up", () => {
    const r = muBytes(["agent", "send", "a", latin1("na\xefve\xff")]);
    expect(r.stderr).toMatch(
      /^mu: usage: argument 4 \('na\\xefve\\xff'\) holds bytes that are not UTF-8; [^\n]+\n$/,
    );
    expect(r.code).toBe(2);
  });

  it("shows the argument unambiguously inside its quotes: a quote, a backslash and control bytes as \\xNN, cut after 40 bytes", () => {
    const r = muBytes(["agent", "send", "a", latin1(`it's a\\b\x7f\x07\xe9${"x".repeat(40)}`)]);
    expect(r.stderr).toBe(
      `mu: usage: argument 4 ('it\\x27s a\\x5cb\\x7f\\x07\\xe9${"x".repeat(29)}...') holds bytes that are not UTF-8; mu passes text on as JSON, which carries UTF-8 only: convert it (iconv -t UTF-8)\n`,
    );
    expect([r.code, r.stdout]).toEqual([2, ""]);
  });

  it("names the first such argument of several, and shows one of exactly 40 bytes whole", () => {
    const forty = latin1(`\xe9${"x".repeat(39)}`);
    const r = muBytes(["host", "exec", "box", "--", "ok", forty, latin1("\xff")]);
    expect(r.stderr).toMatch(
      new RegExp(
        `^mu: usage: argument 6 \\('\\\\xe9${"x".repeat(39)}'\\) holds bytes that are not UTF-8; `,
      ),
    );
    expect(r.code).toBe(2);
  });

  it("takes the same words in UTF-8, and a real U+FFFD typed as UTF-8", () => {
    const r = muBytes(["host", "exec", "box", "--", Buffer.from("echo café \uFFFD", "utf8")]);
    expect(r.stderr).toMatch(/U\+FFFD/); // the output notice, not a refusal
    expect(r.stdout).toBe("café \uFFFD\n");
    expect(r.code).toBe(0);
  });

  it("a --file with such bytes is refused as before (exit 2)", () => {
    const file = join(st.dir, "s.sh");
    writeFileSync(file, latin1("echo caf\xe9\n"));
    const r = muProcess(["host", "exec", "box", "--file", file], st.env);
    expect(r.stderr).toMatch(/^mu: usage: --file [^\n]* is not UTF-8 text; [^\n]+\n$/);
    expect(r.code).toBe(2);
  });
});

describe("output that was not UTF-8", () => {
  it("host exec prints what the plugin returned and says how many characters were replaced", () => {
    const r = muProcess(
      ["host", "exec", "box", "--", "printf 'ok\\377\\376\\n'; printf '\\300' >&2"],
      st.env,
    );
    expect(r.stdout).toBe("ok\uFFFD\uFFFD\n");
    expect(r.stderr).toBe(
      "\uFFFD" +
        "mu: host: the script's stdout on box came back with 2 U+FFFD replacement characters, where the plugin met bytes that were not UTF-8; pipe binary output through base64 to get it whole\n" +
        "mu: host: the script's stderr on box came back with 1 U+FFFD replacement character, where the plugin met bytes that were not UTF-8; pipe binary output through base64 to get it whole\n",
    );
    expect(r.code).toBe(0);
  });

  it("says nothing of long UTF-8 output whose characters straddle the pipe's reads", () => {
    const r = muProcess(["host", "exec", "box", "--", "yes 'é€😀' | head -n 12000"], st.env);
    expect(r.stderr).toBe("");
    expect(r.stdout).toBe("é€😀\n".repeat(12000));
    expect(r.code).toBe(0);
  });
});

describe("firstNotUtf8", () => {
  it("finds the argument whose bytes are not UTF-8", () => {
    const raw = [Buffer.from("a"), latin1("\xe9"), Buffer.from("c")];
    expect(firstNotUtf8(["a", "\uFFFD", "c"], raw)).toBe(1);
    expect(
      firstNotUtf8(["a", "é", "c"], [Buffer.from("a"), Buffer.from("é"), Buffer.from("c")]),
    ).toBeUndefined();
    // A U+FFFD typed as UTF-8 is text like any other.
    expect(firstNotUtf8(["\uFFFD"], [Buffer.from("\uFFFD")])).toBeUndefined();
  });

  it("without the kernel's copy of argv, takes a U+FFFD as the trace of such bytes", () => {
    expect(firstNotUtf8(["ok", "x\uFFFD"], null)).toBe(1);
    expect(firstNotUtf8(["ok", "fine"], null)).toBeUndefined();
    expect(() => checkArgsUtf8(["x\uFFFD"], null)).toThrow(/argument 1 \('x\\xef\\xbf\\xbd'\)/);
  });
});

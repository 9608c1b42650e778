import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { packageRoot } from "../host/package-root.js";
import {
  callDeadline,
  fitReply,
  fitsReply,
  noRemoteRoot,
  PluginError,
  reply,
  replyError,
  withDeadline,
} from "../plugins/ssh/rpc.js";
import { mutantEnv } from "./helpers.js";

// mu-plugin-ssh's side of the wire, written from the protocol alone: what
// each reply line holds (an error's kind and remedy), how stdin becomes
// messages, each call's deadline in reach of its work, and a result cut to
// fit the 1 MiB line.

const MiB = 1024 * 1024;

/** Every line the plugin wrote to stdout while `f` ran, parsed. */
function written(f: () => void): unknown[] {
  const lines: string[] = [];
  const spy = vi.spyOn(process.stdout, "write").mockImplementation((s) => {
    lines.push(String(s));
    return true;
  });
  try {
    f();
  } finally {
    spy.mockRestore();
  }
  expect(lines.every((l) => l.endsWith("\n") && !l.slice(0, -1).includes("\n"))).toBe(true);
  return lines.map((l) => JSON.parse(l));
}

afterEach(() => vi.restoreAllMocks());

describe("mu-plugin-ssh's replies", () => {
  it("a result is one line; a missing result is null", () => {
    expect(written(() => reply(7, { a: 1 }))).toEqual([
      { jsonrpc: "2.0", id: 7, result: { a: 1 } },
    ]);
    expect(written(() => reply("x", undefined))).toEqual([
      { jsonrpc: "2.0", id: "x", result: null },
    ]);
  });

  it("a typed error carries its kind, and its remedy when it has one", () => {
    expect(
      written(() => replyError(1, new PluginError("permanent", "no such thing", "fix it"))),
    ).toEqual([
      {
        jsonrpc: "2.0",
        id: 1,
        error: {
          code: -32000,
          message: "no such thing",
          data: { kind: "permanent", remedy: "fix it" },
        },
      },
    ]);
    expect(written(() => replyError(2, new PluginError("retryable", "busy")))).toEqual([
      {
        jsonrpc: "2.0",
        id: 2,
        error: { code: -32000, message: "busy", data: { kind: "retryable" } },
      },
    ]);
  });

  it("a human error always names a remedy, the administrator where it has none of its own", () => {
    expect(written(() => replyError(3, new PluginError("human", "locked out")))).toEqual([
      {
        jsonrpc: "2.0",
        id: 3,
        error: {
          code: -32000,
          message: "locked out",
          data: { kind: "human", remedy: "ask the machine's administrator" },
        },
      },
    ]);
    const root = noRemoteRoot("/srv/mu");
    expect([root.kind, root.message, root.remedy]).toEqual([
      "human",
      "mu-plugin-ssh: the remote root '/srv/mu' is missing or not writable",
      "create it on the remote or fix --home in the plugin's registration",
    ]);
  });

  it("anything else thrown is an unknown outcome, named as the plugin's", () => {
    expect(written(() => replyError(4, new Error("boom")))).toEqual([
      {
        jsonrpc: "2.0",
        id: 4,
        error: { code: -32000, message: "mu-plugin-ssh: boom", data: { kind: "unknown-outcome" } },
      },
    ]);
    expect(written(() => replyError(5, "a string"))).toEqual([
      {
        jsonrpc: "2.0",
        id: 5,
        error: {
          code: -32000,
          message: "mu-plugin-ssh: a string",
          data: { kind: "unknown-outcome" },
        },
      },
    ]);
  });
});

describe("a call's deadline", () => {
  it("is in reach of everything the call's work awaits, and of nothing outside it", async () => {
    expect(callDeadline()).toBe(Number.POSITIVE_INFINITY);
    const seen = await withDeadline({ deadline: 1234 }, async () => {
      await new Promise((r) => setTimeout(r, 1));
      return callDeadline();
    });
    expect(seen).toBe(1234);
    expect(callDeadline()).toBe(Number.POSITIVE_INFINITY);
    expect(withDeadline({}, () => callDeadline())).toBe(Number.POSITIVE_INFINITY);
    expect(withDeadline({ deadline: "soon" }, () => callDeadline())).toBe(Number.POSITIVE_INFINITY);
    expect(withDeadline({ deadline: "99" }, () => callDeadline())).toBe(99);
  });
});

describe("a result on the 1 MiB line", () => {
  it("fits with 64 KiB to spare for the envelope, counted in bytes", () => {
    // JSON of a string adds its two quotes.
    expect(fitsReply("a".repeat(MiB - 64 * 1024 - 2))).toBe(true);
    expect(fitsReply("a".repeat(MiB - 64 * 1024 - 1))).toBe(false);
    // U+FFFD takes three bytes.
    expect(fitsReply("\ufffd".repeat((MiB - 64 * 1024) / 3))).toBe(false);
  });

  it("is cut by halving the longer stream until it fits, and marked partial", () => {
    const r = { stdout: "o".repeat(2 * MiB), stderr: "e".repeat(MiB), partial: false };
    fitReply(r);
    expect(fitsReply(r)).toBe(true);
    expect(r.partial).toBe(true);
    // stdout halved to 1 MiB, then (a tie goes to stdout) to 512 KiB; stderr,
    // now the longer, to 512 KiB; at 1 MiB together, stdout once more.
    expect([r.stdout.length, r.stderr.length]).toEqual([MiB / 4, MiB / 2]);
    const e = { stdout: "", stderr: "e".repeat(2 * MiB), partial: false };
    fitReply(e);
    expect([e.stdout.length, e.stderr.length, e.partial]).toEqual([0, MiB / 2, true]);
    const small = { stdout: "ok", stderr: "", partial: false };
    fitReply(small);
    expect(small).toEqual({ stdout: "ok", stderr: "", partial: false });
  });
});

describe("reading stdin", () => {
  /** The plugin's reader in a child Node, fed `input`: what it handed on, and what it said on stderr. */
  function read(input: string) {
    const mod = join(packageRoot(), "dist/plugins/ssh/rpc.js");
    const r = spawnSync(
      process.execPath,
      [
        "--input-type=module",
        "-e",
        `import { readMessages } from ${JSON.stringify(mod)};
         const got = [];
         readMessages((m) => got.push(m), () => process.stdout.write(JSON.stringify(got)));`,
      ],
      { input, encoding: "utf8", env: { PATH: process.env.PATH ?? "", ...mutantEnv() } },
    );
    return { got: JSON.parse(r.stdout || "null"), stderr: r.stderr };
  }

  it("hands on each JSON line, skips blank ones, and drops a bad one with a line on stderr", () => {
    const r = read('{"id":1}\n\n   \nnot json\n{"id":2,"method":"m"}\n');
    expect(r.got).toEqual([{ id: 1 }, { id: 2, method: "m" }]);
    expect(r.stderr).toBe("mu-plugin-ssh: dropped a line that is not JSON\n");
  });

  it("joins a line split across reads, and ignores an unfinished last line at the end", () => {
    const r = read(`{"id":1,"params":{"s":"${"x".repeat(200_000)}"}}\n{"id":2}`);
    expect(r.got.map((m: { id: number }) => m.id)).toEqual([1]);
    expect(r.stderr).toBe("");
  });

  it("drops a line once it passes 1 MiB without its newline, then reads on", () => {
    // Valid JSON, but too long: what is left of it after the drop is not.
    const r = read(`{"id":9,"s":"${"x".repeat(2 * MiB)}"}\n{"id":3}\n`);
    expect(r.got).toEqual([{ id: 3 }]);
    expect(r.stderr).toBe("mu-plugin-ssh: dropped a line that is not JSON\n");
  });
});

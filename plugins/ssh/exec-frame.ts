import { fitsReply } from "./rpc.js";
import { wholeChars } from "./utf8.js";

// What comes back from the remote wrapper of a run: its framing line, then
// each stream's first bytes, fitted into one reply.

/** Bytes of each stream the remote sends back; the reply is then fitted under 1 MiB. */
export const OUTPUT_CAP = 400 * 1024;

export interface ExecResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  partial: boolean;
}

export interface Framed {
  tag: string;
  code?: string;
  result?: ExecResult;
}

interface Stream {
  kept: Buffer;
  /** Bytes the script wrote to it. */
  total: number;
}

const cutNote = (name: string, kept: number, total: number): string[] =>
  kept < total ? [`${name} kept ${kept} of ${total} bytes, ${total - kept} cut`] : [];

/**
 * The result of a run whose streams the remote cut at OUTPUT_CAP: each is
 * cut further, at a character's start, while the reply would not fit, and
 * stderr ends with a line saying how many bytes of each were cut.
 */
function fitted(exitCode: number | null, out: Stream, err: Stream): ExecResult {
  const dec = (b: Buffer) => new TextDecoder("utf-8").decode(b);
  let [o, e] = [out.kept, err.kept];
  for (;;) {
    const cuts = [
      ...cutNote("stdout", o.length, out.total),
      ...cutNote("stderr", e.length, err.total),
    ];
    let stderr = dec(e);
    if (cuts.length > 0)
      stderr += `${stderr === "" || stderr.endsWith("\n") ? "" : "\n"}mu-plugin-ssh: output cut (at most ${OUTPUT_CAP} bytes of each stream come back): ${cuts.join("; ")}\n`;
    const r: ExecResult = { exitCode, stdout: dec(o), stderr, partial: cuts.length > 0 };
    if (fitsReply(r)) return r;
    if (o.length >= e.length) o = Buffer.from(wholeChars(o.subarray(0, o.length >> 1)));
    else e = Buffer.from(wholeChars(e.subarray(0, e.length >> 1)));
  }
}

/** Finds the wrapper's framing line for this run and the output that follows it. */
export function parseFrame(raw: Buffer, id: string): Framed | undefined {
  const text = raw.toString("latin1");
  const re = new RegExp(`^MU-SSH-([A-Z-]+) ${id}([^\\n]*)\\n`, "gm");
  let last: Framed | undefined;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const tag = m[1] ?? "";
    const rest = (m[2] ?? "").trim().split(" ");
    if (tag !== "RESULT") {
      last = { tag };
      continue;
    }
    const [code, outN, errN] = rest;
    const at = m.index + m[0].length;
    const outBytes = Math.min(Number(outN), OUTPUT_CAP);
    const errBytes = Math.min(Number(errN), OUTPUT_CAP);
    const r = fitted(
      code === "-" || code === "?" ? null : Number(code),
      { kept: raw.subarray(at, at + outBytes), total: Number(outN) },
      { kept: raw.subarray(at + outBytes, at + outBytes + errBytes), total: Number(errN) },
    );
    return { tag, code, result: r };
  }
  return last;
}

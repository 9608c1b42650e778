import { decodeIncoming } from "../plugin/envelope.js";
import { LineFramer } from "../plugin/framing.js";
import { protocolChecks } from "../protocol/checks.js";

// Everything one plugin process wrote, judged line by line. The host's
// connection stops reading at the first bad line and keeps no copy of it;
// the suite has to show the author the offending bytes, and keep judging the
// lines that follow a check's own expectations.

/** Enough to hold any legitimate conversation of a check; more is a flood, not evidence. */
const KEEP_BYTES = 8 * 1024 * 1024;
const SHOW_CHARS = 240;

/** What follows a clipped excerpt: the suite's canary mask looks for it. */
export const clipMark = "… (";

export function clip(s: string, max = SHOW_CHARS): string {
  return s.length > max ? `${s.slice(0, max)}${clipMark}${s.length} chars)` : s;
}

/** Bytes as text an author can read, with bytes that are not UTF-8 shown as \xNN. */
function showBytes(b: Buffer): string {
  let out = "";
  const decoder = new TextDecoder("utf-8", { fatal: true });
  for (let i = 0; i < b.length && out.length < SHOW_CHARS; ) {
    let done = false;
    for (let n = Math.min(4, b.length - i); n >= 1; n--) {
      try {
        out += decoder.decode(b.subarray(i, i + n));
        i += n;
        done = true;
        break;
      } catch {
        // not a whole character at this length; try a shorter one
      }
    }
    if (!done) {
      out += `\\x${(b[i] ?? 0).toString(16).padStart(2, "0")}`;
      i += 1;
    }
  }
  return clip(out);
}

export class WireLog {
  /** Each thing wrong with what the plugin wrote, with the offending line. */
  readonly problems: string[] = [];
  lines = 0;
  private readonly framer = new LineFramer();
  private framingBroken = false;
  private readonly asked = new Map<number, string>();
  private readonly answered = new Set<number>();
  /** Watches the plugin opened and has not yet ended with their one notification. */
  private readonly watches = new Set<string>();
  /** Notifications that came before their watch's reply: channel.watch judges the order. */
  private readonly early = new Map<string, string>();
  private readonly checks = protocolChecks();
  private readonly stdout: Buffer[] = [];
  private readonly stderrBuf: Buffer[] = [];
  private kept = { stdout: 0, stderr: 0 };
  private raw = Buffer.alloc(0);

  /** A line mu wrote; requests are remembered so replies can be matched to them. */
  sent(bytes: Uint8Array): void {
    try {
      const msg = JSON.parse(Buffer.from(bytes).toString("utf8")) as {
        id?: unknown;
        method?: unknown;
      };
      if (typeof msg.id === "number" && typeof msg.method === "string")
        this.asked.set(msg.id, msg.method);
    } catch {
      // mu writes only what encodeLine made; nothing to learn from anything else
    }
  }

  received(chunk: Uint8Array): void {
    const b = Buffer.from(chunk);
    this.keep("stdout", b);
    if (this.framingBroken) return;
    // Kept alongside the framer so a bad line can be shown as the bytes it was.
    this.raw = Buffer.concat([this.raw, b]);
    for (const frame of this.framer.push(chunk)) {
      if ("error" in frame) {
        this.framingBroken = true;
        const at = this.raw.indexOf(0x0a);
        const line = at === -1 ? this.raw : this.raw.subarray(0, at);
        this.problems.push(
          frame.error.kind === "oversize"
            ? `a line of more than 1 MiB (${frame.error.bytes} bytes so far): ${showBytes(line)}`
            : `a line that is not valid UTF-8: ${showBytes(line)}`,
        );
        return;
      }
      const nl = this.raw.indexOf(0x0a);
      this.raw = this.raw.subarray(nl + 1);
      this.lines += 1;
      this.judge(frame.line);
    }
  }

  stderr(chunk: Uint8Array): void {
    this.keep("stderr", Buffer.from(chunk));
  }

  /** stdout is over: a last line without its newline is an incomplete message. */
  end(): void {
    if (!this.framingBroken && this.framer.pending() > 0)
      this.problems.push(`a last line with no newline: ${showBytes(this.raw)}`);
    for (const line of this.early.values())
      this.problems.push(`a notification with no watch open: ${clip(line)}`);
    this.early.clear();
  }

  /** Every line of stdout and stderr holding `needle`, marked by stream. */
  linesWith(needle: string): { stream: "stdout" | "stderr"; line: string }[] {
    const found: { stream: "stdout" | "stderr"; line: string }[] = [];
    for (const stream of ["stdout", "stderr"] as const) {
      const text = Buffer.concat(stream === "stdout" ? this.stdout : this.stderrBuf).toString(
        "latin1",
      );
      for (const line of text.split("\n")) if (line.includes(needle)) found.push({ stream, line });
    }
    return found;
  }

  private keep(stream: "stdout" | "stderr", b: Buffer): void {
    const room = KEEP_BYTES - this.kept[stream];
    if (room <= 0) return;
    (stream === "stdout" ? this.stdout : this.stderrBuf).push(b.subarray(0, room));
    this.kept[stream] += Math.min(room, b.length);
  }

  private judge(line: string): void {
    const msg = decodeIncoming(line);
    switch (msg.type) {
      case "invalid":
        this.problems.push(`${msg.why}: ${clip(line)}`);
        return;
      case "notification": {
        const why = this.checks.checkNotification?.(msg.method, msg.params);
        const watchId = (msg.params as { watchId?: unknown } | undefined)?.watchId;
        // Exactly one notification per watch the suite opened; anything else is unasked.
        if (!why && typeof watchId === "string" && this.watches.delete(watchId)) return;
        if (!why && typeof watchId === "string" && !this.early.has(watchId)) {
          this.early.set(watchId, line);
          return;
        }
        this.problems.push(
          why
            ? `${msg.method} does not match the schema (${why}): ${clip(line)}`
            : `${msg.method} with no watch open: ${clip(line)}`,
        );
        return;
      }
      case "reply":
      case "error": {
        const method = this.asked.get(msg.id);
        if (method === undefined) {
          this.problems.push(`a reply to id ${msg.id}, which mu never sent: ${clip(line)}`);
          return;
        }
        if (this.answered.has(msg.id)) {
          this.problems.push(`a second reply to id ${msg.id} (${method}): ${clip(line)}`);
          return;
        }
        this.answered.add(msg.id);
        if (msg.type === "reply") {
          const why = this.checks.checkResult?.(method, msg.result);
          if (why) this.problems.push(`${method} result: ${clip(why)}: ${clip(line)}`);
          const watchId = (msg.result as { watchId?: unknown } | null)?.watchId;
          if (method === "channel.watch" && typeof watchId === "string")
            if (!this.early.delete(watchId)) this.watches.add(watchId);
        }
      }
    }
  }
}

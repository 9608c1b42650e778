// Line framing for the plugin transport: one message per '\n'-terminated
// line, at most MAX_LINE_BYTES bytes before the newline, strict UTF-8.
// Pure: bytes in, lines or one fatal framing error out; no streams, so the
// virtual engine and the real transport share it.

export const MAX_LINE_BYTES = 1024 * 1024;

export type FrameError = { kind: "oversize"; bytes: number } | { kind: "bad-utf8" };

export type Frame = { line: string } | { error: FrameError };

export class LineFramer {
  private parts: Buffer[] = [];
  private size = 0;
  private broken = false;
  // fatal: a line that is not valid UTF-8 is an invalid message; mu never repairs one.
  private readonly decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

  /** Feeds a chunk; returns the complete lines in it. After an error, nothing more. */
  push(chunk: Uint8Array): Frame[] {
    if (this.broken) return [];
    const frames: Frame[] = [];
    let buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    for (;;) {
      const nl = buf.indexOf(0x0a);
      const piece = nl === -1 ? buf : buf.subarray(0, nl);
      if (this.size + piece.length > MAX_LINE_BYTES) {
        this.broken = true;
        frames.push({ error: { kind: "oversize", bytes: this.size + piece.length } });
        return frames;
      }
      if (nl === -1) {
        if (piece.length > 0) {
          // Copy: the caller may reuse its chunk.
          this.parts.push(Buffer.from(piece));
          this.size += piece.length;
        }
        return frames;
      }
      const bytes = this.parts.length === 0 ? piece : Buffer.concat([...this.parts, piece]);
      this.parts = [];
      this.size = 0;
      let line: string;
      try {
        line = this.decoder.decode(bytes);
      } catch {
        this.broken = true;
        frames.push({ error: { kind: "bad-utf8" } });
        return frames;
      }
      frames.push({ line });
      buf = buf.subarray(nl + 1);
    }
  }

  /** Bytes of an unterminated last line, which at EOF is an incomplete message. */
  pending(): number {
    return this.size;
  }
}

/** Encodes one message as its wire line; refuses one mu itself would not accept. */
export function encodeLine(message: unknown): Buffer {
  const text = JSON.stringify(message);
  const bytes = Buffer.from(`${text}\n`, "utf8");
  if (bytes.length - 1 > MAX_LINE_BYTES) {
    throw new RangeError(
      `message of ${bytes.length - 1} bytes exceeds the ${MAX_LINE_BYTES}-byte line limit`,
    );
  }
  return bytes;
}

// stderr is drained so a chatty plugin never blocks on a full pipe, and never
// parsed or stored; only its first line is kept, cut, for an error message.
export const STDERR_LINE_MAX = 400;

export class FirstLine {
  private buf = "";
  private done = false;
  // One decoder across chunks: a character split between two writes is
  // joined, not shown as two replacement characters.
  private readonly decoder = new TextDecoder("utf-8");

  push(chunk: Uint8Array): void {
    if (this.done) return;
    this.buf += this.decoder.decode(chunk, { stream: true });
    const nl = this.buf.indexOf("\n");
    if (nl !== -1) {
      this.buf = this.buf.slice(0, nl);
      this.done = true;
    }
    if (this.buf.length > STDERR_LINE_MAX) {
      this.buf = this.buf.slice(0, STDERR_LINE_MAX);
      this.done = true;
    }
  }

  get line(): string | undefined {
    const l = this.buf.replace(/\r$/, "");
    return l === "" ? undefined : l;
  }
}

// stderr is drained so a chatty plugin never blocks on a full pipe, and never
// parsed or stored; only its first line is kept, cut, for an error message.
export const STDERR_LINE_MAX = 400;

export class FirstLine {
  private buf = "";
  private done = false;
  private complete = false;
  // One decoder across chunks: a character split between two writes is
  // joined, not shown as two replacement characters.
  private readonly decoder = new TextDecoder("utf-8");

  /**
   * keep: how many characters of the line to hold. A trace holds more than
   * it shows, so a secret that starts before the cut is whole when masked.
   */
  constructor(private readonly keep = STDERR_LINE_MAX) {}

  push(chunk: Uint8Array): void {
    if (this.done) return;
    this.buf += this.decoder.decode(chunk, { stream: true });
    const nl = this.buf.indexOf("\n");
    if (nl !== -1) {
      this.buf = this.buf.slice(0, nl);
      this.done = true;
      this.complete = true;
    }
    if (this.buf.length > this.keep) {
      this.buf = this.buf.slice(0, this.keep);
      this.done = true;
      this.complete = false;
    }
  }

  /**
   * Whether what is held is the whole line: a newline ended it within what
   * is kept. Else it is only the line's start (cut, still arriving, or the
   * plugin ended mid-line), and a secret may run on past it.
   */
  get whole(): boolean {
    return this.complete;
  }

  get line(): string | undefined {
    const l = this.buf.replace(/\r$/, "");
    return l === "" ? undefined : l;
  }
}

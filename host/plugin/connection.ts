// Size: one plugin process's call table (ids, deadlines, cancels, watches) and the rules over it.
import type { Clock } from "../ports/types.js";
import { ErrorReply, NoAnswer, type NoAnswerReason } from "./call-errors.js";
import { decodeIncoming, NOT_JSON, notJson } from "./envelope.js";
import { encodeLine, LineFramer } from "./framing.js";
import { checkRequestSize } from "./request-size.js";

// JSON-RPC client side of one plugin process: ids, deadlines, $/cancel,
// watch notifications, and the strict rule that any invalid message breaks
// the plugin. It decides when the plugin must stop but does not stop it:
// the supervisor owns the process and runs the one stop sequence.

export type StopCause = "deadline" | "aborted" | "invalid" | "exited";

export interface ConnectionOptions {
  write(bytes: Uint8Array): boolean;
  clock: Clock;
  /** Checks a method's result against the schema; returns why it fails, or null. */
  checkResult?(method: string, result: unknown): string | null;
  checkNotification?(method: string, params: unknown): string | null;
  /** Hides mu's secrets in a plugin's text before mu quotes it. */
  mask?(text: string): string;
  /** Called once when the connection wants the plugin stopped. */
  onStop(cause: StopCause, detail: string): void;
}

export interface CallOptions {
  timeoutMs: number;
  signal?: AbortSignal;
  /** Every call's params carry `deadline` except the handshake's, which the spec shows bare. */
  bare?: boolean;
}

interface Pending {
  method: string;
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer: { cancel(): void };
  unlisten(): void;
}

interface Watch {
  deliver?: (method: string, params: Record<string, unknown>) => void;
  buffered?: { method: string; params: Record<string, unknown> };
}

export type ConnectionState = "open" | "stopping" | "broken" | "closed";

export class Connection {
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  /** Ids mu gave up on: a late reply to one is ignored, not invalid. */
  private readonly abandoned = new Set<number>();
  private readonly watches = new Map<string, Watch>();
  /** Watches mu cancelled: a notification crossing the cancel is ignored. */
  private readonly cancelledWatches = new Set<string>();
  private readonly framer = new LineFramer();
  private stopRequested = false;
  /** What asked for the stop first, for the message of the calls it leaves unanswered. */
  private stopWhy: string | undefined;
  private stopBegun = false;
  state: ConnectionState = "open";
  brokenWhy: string | undefined;

  constructor(private readonly opts: ConnectionOptions) {}

  /** Sends a request; params gain `deadline`. Rejects with NoAnswer or ErrorReply. */
  request(method: string, params: Record<string, unknown>, call: CallOptions): Promise<unknown> {
    if (this.state !== "open") {
      const why =
        this.state === "broken"
          ? `the plugin sent an invalid message (${this.brokenWhy})`
          : "the plugin is stopping";
      return Promise.reject(new NoAnswer(method, "refused", `${method} not sent: ${why}`));
    }
    if (call.signal?.aborted) {
      return Promise.reject(
        new NoAnswer(method, "not-sent", `${method} cancelled before it was sent`),
      );
    }
    try {
      checkRequestSize(method, params, call.bare);
    } catch (err) {
      return Promise.reject(err);
    }
    const id = this.nextId++;
    const deadline = this.opts.clock.now() + call.timeoutMs;
    const line = encodeLine({
      jsonrpc: "2.0",
      id,
      method,
      params: call.bare ? params : { ...params, deadline },
    });
    return new Promise((resolve, reject) => {
      const onAbort = () => this.giveUp(id, "aborted", `${method} cancelled by mu`);
      call.signal?.addEventListener("abort", onAbort, { once: true });
      const entry: Pending = {
        method,
        resolve,
        reject,
        timer: this.opts.clock.setTimer(call.timeoutMs, () =>
          this.giveUp(id, "deadline", `${method} had no answer within ${call.timeoutMs} ms`),
        ),
        unlisten: () => call.signal?.removeEventListener("abort", onAbort),
      };
      this.pending.set(id, entry);
      this.opts.write(line);
    });
  }

  notify(method: string, params: Record<string, unknown>): void {
    this.opts.write(encodeLine({ jsonrpc: "2.0", method, params }));
  }

  /** Receives the one notification that ends a watch (buffered if it came first). */
  onWatch(
    watchId: string,
    deliver: (method: string, params: Record<string, unknown>) => void,
  ): void {
    const w = this.watches.get(watchId);
    if (!w) return;
    if (w.buffered) {
      this.watches.delete(watchId);
      deliver(w.buffered.method, w.buffered.params);
    } else {
      w.deliver = deliver;
    }
  }

  cancelWatch(watchId: string): void {
    if (this.watches.delete(watchId)) {
      this.cancelledWatches.add(watchId);
      if (!this.stopBegun) this.notify("$/cancel", { watchId });
    }
  }

  pendingIds(): number[] {
    return [...this.pending.keys()];
  }

  /**
   * The wire half of the stop sequence: $/cancel each pending call, then
   * shutdown. Pending calls are then unanswered. Idempotent.
   */
  beginStop(reason: NoAnswerReason = "stopped"): void {
    if (!this.stopBegun) {
      this.stopBegun = true;
      // Even a broken plugin gets the whole sequence: it may still be
      // reading, and a clean shutdown beats a kill.
      for (const id of this.pending.keys()) this.notify("$/cancel", { id });
      this.notify("shutdown", {});
      if (this.state === "open") this.state = "stopping";
    }
    this.failAll(reason);
  }

  /** stdout chunks from the plugin. */
  feed(chunk: Uint8Array): void {
    for (const frame of this.framer.push(chunk)) {
      if ("error" in frame) {
        this.invalid(
          frame.error.kind === "oversize"
            ? `a line over 1 MiB (${frame.error.bytes} bytes)`
            : "a line that is not valid UTF-8",
        );
        return;
      }
      this.handleLine(frame.line);
      if (this.state === "broken") return;
    }
  }

  /**
   * stdout closed: no answer can come any more, so the plugin is stopped.
   * The pending calls stay pending until the stop sequence has sent each
   * its $/cancel; only then are they failed as unanswered.
   */
  end(): void {
    if (this.framer.pending() > 0 && this.state === "open")
      this.invalid("an unterminated last line");
    if (this.state !== "broken") this.state = "closed";
    this.requestStop("exited", "it closed its stdout");
  }

  /**
   * A write to the plugin's stdin failed (EPIPE: the plugin closed it, or
   * died before mu saw its exit): nothing more reaches it.
   * A call already written stays unanswered (it may have been read); the
   * stop sequence runs as for any stop, and later calls are refused unsent.
   */
  inputLost(code: string): void {
    this.requestStop("exited", `its stdin is closed (${code} on write)`);
  }

  private handleLine(line: string): void {
    const msg = decodeIncoming(line);
    switch (msg.type) {
      case "invalid":
        // Masked before the quote's cut, so no secret keeps its first characters.
        this.invalid(msg.why === NOT_JSON ? notJson(this.opts.mask?.(line) ?? line) : msg.why);
        return;
      case "notification": {
        const why = this.opts.checkNotification?.(msg.method, msg.params);
        if (why) {
          this.invalid(`${msg.method}: ${why}`);
          return;
        }
        const watchId = String(msg.params.watchId);
        if (this.cancelledWatches.has(watchId)) return;
        const w = this.watches.get(watchId);
        if (!w || w.buffered) {
          this.invalid(`${msg.method} for no open watch '${watchId}'`);
          return;
        }
        if (w.deliver) {
          this.watches.delete(watchId);
          w.deliver(msg.method, msg.params);
        } else {
          w.buffered = { method: msg.method, params: msg.params };
        }
        return;
      }
      case "reply":
      case "error": {
        if (this.abandoned.has(msg.id)) {
          // A watch mu gave up on may still have opened: its notification
          // must be ignored like any that crosses a cancel.
          const watchId = (
            msg.type === "reply" ? (msg.result as { watchId?: unknown } | null) : null
          )?.watchId;
          if (typeof watchId === "string") this.cancelledWatches.add(watchId);
          return;
        }
        const p = this.pending.get(msg.id);
        if (!p) {
          this.invalid(`a reply to no pending request (id ${msg.id})`);
          return;
        }
        if (msg.type === "reply") {
          const why = this.opts.checkResult?.(p.method, msg.result);
          if (why) {
            this.invalid(`${p.method} result: ${why}`);
            return;
          }
        }
        this.settle(msg.id);
        if (msg.type === "error") {
          p.reject(new ErrorReply(p.method, msg.error.kind, msg.error.message, msg.error.remedy));
        } else {
          if (p.method === "channel.watch") this.openWatch(msg.result);
          p.resolve(msg.result);
        }
      }
    }
  }

  private openWatch(result: unknown): void {
    const watchId = (result as { watchId?: unknown } | null)?.watchId;
    if (typeof watchId === "string") this.watches.set(watchId, {});
  }

  private settle(id: number): Pending | undefined {
    const p = this.pending.get(id);
    if (!p) return undefined;
    this.pending.delete(id);
    p.timer.cancel();
    p.unlisten();
    return p;
  }

  private giveUp(id: number, reason: "deadline" | "aborted", message: string): void {
    const p = this.settle(id);
    if (!p) return;
    this.abandoned.add(id);
    if (!this.stopBegun) this.notify("$/cancel", { id });
    p.reject(new NoAnswer(p.method, reason, message));
    this.requestStop(reason, message);
  }

  private invalid(why: string): void {
    if (this.state === "broken") return;
    this.state = "broken";
    this.brokenWhy = why;
    this.requestStop("invalid", why);
  }

  private failAll(reason: NoAnswerReason): void {
    for (const id of [...this.pending.keys()]) {
      const p = this.settle(id);
      if (!p) continue;
      this.abandoned.add(id);
      const why = this.brokenWhy
        ? `the plugin sent an invalid message (${this.brokenWhy})`
        : reason === "exited" && this.stopWhy
          ? `the plugin was stopped: ${this.stopWhy}`
          : `the plugin was stopped (${reason})`;
      p.reject(new NoAnswer(p.method, reason, `${p.method} unanswered: ${why}`));
    }
  }

  private requestStop(cause: StopCause, detail: string): void {
    if (this.stopRequested) return;
    this.stopRequested = true;
    this.stopWhy = detail;
    this.opts.onStop(cause, detail);
  }
}

import { createHash } from "node:crypto";
import { observation, parseState, type State, TEXT_CAP } from "./channel-state.js";
import { type Answer, type Jobs, keyOf } from "./job.js";
import { type Params, PluginError, writeMessage } from "./rpc.js";
import { wholeChars } from "./utf8.js";

export { wholeChars };

// The channel of a one-shot harness: each delivery is one turn the job's
// loop runs; receipts are files on the remote keyed by the msgId's hash, so
// a receipt and a deduped resend answer from the remote alone.

const POLL_MS = 500;
/** How long one remote wait of a watch lasts before the plugin asks again (under ctl's 20 s). */
const AWAIT_S = 10;
/** Watches waiting on the remote at once, a session each; the rest poll, so calls find one free. */
const MAX_AWAITS = 4;

const hashOf = (msgId: string) => createHash("sha256").update(msgId).digest("hex");

function refOf(p: Params): string {
  const a = (p.target as { agent?: { workstream: string; name: string } } | undefined)?.agent;
  return a ? `${a.workstream}/${a.name}` : "";
}

export class Channel {
  private readonly watches = new Map<string, AbortController>();
  private nextWatch = 1;
  private awaiting = 0;

  constructor(
    private readonly jobs: Jobs,
    /** The channel's name, as declared at the handshake. */
    private readonly name: string,
  ) {}

  /**
   * The channel's state (of incarnation `inc`, else the current one), with
   * the text of turn `turn`: none for 0, the last settled one for "last".
   */
  private async state(
    key: string,
    turn: 0 | "last",
    inc: number | undefined,
    signal?: AbortSignal,
  ): Promise<State | undefined> {
    const r = await this.jobs.ctl(
      key,
      "state",
      [String(turn), inc === undefined ? "" : String(inc), String(TEXT_CAP)],
      signal,
    );
    return parseState(r);
  }

  /**
   * Waits on the remote, one session, until a turn past `after` settles or
   * `inc` is no longer current: that state, "again" once AWAIT_S passed, or
   * undefined for no such job. Past MAX_AWAITS, one plain read instead.
   */
  private async awaitTurn(
    key: string,
    after: number,
    inc: number,
    signal: AbortSignal,
  ): Promise<State | "again" | undefined> {
    if (this.awaiting >= MAX_AWAITS) return this.state(key, "last", inc, signal);
    this.awaiting++;
    try {
      const r = await this.jobs.ctl(
        key,
        "await",
        [String(after), String(inc), String(TEXT_CAP), String(AWAIT_S)],
        signal,
      );
      return r.tag === "CH-WAITED" ? "again" : parseState(r);
    } finally {
      this.awaiting--;
    }
  }

  async readStates(p: Params, signal: AbortSignal): Promise<unknown> {
    const ref = refOf(p);
    const asked = ((p.targets as string[] | undefined) ?? []).includes(ref);
    const s = asked ? await this.state(keyOf(p), 0, undefined, signal) : undefined;
    if (!s) return {};
    return { [ref]: { state: s.status, since: s.since, runs: s.runs, incarnation: s.inc } };
  }

  async baseline(p: Params, signal: AbortSignal): Promise<unknown> {
    const s = await this.state(keyOf(p), 0, undefined, signal);
    return s ? { runs: s.runs, incarnation: s.inc } : null;
  }

  async receipt(p: Params, signal: AbortSignal): Promise<unknown> {
    const id = String(p.msgId);
    const r = await this.jobs.ctl(keyOf(p), "receipt", [hashOf(id)], signal);
    if (r.tag !== "CH-ACC") return { state: "not-accepted", id };
    const [seq, inc, at] = r.fields;
    return {
      state: "accepted",
      id,
      runs: Number(seq) - 1,
      incarnation: Number(inc),
      at: Number(at),
    };
  }

  async lastRun(p: Params, signal: AbortSignal): Promise<unknown> {
    const after = Number(p.afterRuns ?? 0);
    const inc = typeof p.inc === "number" ? p.inc : undefined;
    // The last settled turn, not the first past afterRuns: the observation's
    // runs counts every settled turn, and its text must be of the turn it counts last.
    const s = await this.state(keyOf(p), "last", inc, signal);
    if (!s || s.runs <= after) return null;
    return observation(s, after);
  }

  /** A delivery: send, or fresh (a new incarnation whose first turn is the text). */
  async deliver(p: Params, fresh: boolean, signal: AbortSignal): Promise<unknown> {
    const { msgId, r } = await this.enqueue(p, "send", fresh, signal);
    return { channel: this.name, ack: "confirmed", baseline: Number(r.fields[0]) - 1, msgId };
  }

  /** Emulated: kills the running turn's process group, then queues the text as the next turn. */
  async interrupt(p: Params, signal: AbortSignal): Promise<unknown> {
    const { msgId, r } = await this.enqueue(p, "interrupt", false, signal);
    const [seq, inc, was] = r.fields;
    return {
      wasBusy: r.tag === "CH-OK" && was === "busy",
      pending: true,
      runs: Number(seq) - 1,
      msgId,
      incarnation: Number(inc),
    };
  }

  /** Kills the running turn, then watches it settle for up to timeoutMs. */
  async abort(p: Params, signal: AbortSignal): Promise<unknown> {
    const key = keyOf(p);
    const r = await this.jobs.ctl(key, "abort", [], signal);
    if (r.tag !== "CH-ABORT")
      throw new PluginError("permanent", "mu-plugin-ssh: the agent's job is not running");
    const [was, runs] = r.fields;
    const before = was === "busy" ? "busy" : "idle";
    const end = Date.now() + Number(p.timeoutMs ?? 10_000);
    let s = await this.state(key, 0, undefined, signal);
    while (
      before === "busy" &&
      s &&
      s.runs <= Number(runs) &&
      Date.now() < end &&
      !signal.aborted
    ) {
      await new Promise((res) => setTimeout(res, POLL_MS));
      s = await this.state(key, 0, undefined, signal);
    }
    const settled = before === "idle" || (s !== undefined && s.runs > Number(runs));
    return {
      before,
      after: s?.status === "busy" ? "busy" : "idle",
      settled,
      aborted: before === "busy",
      pending: false,
    };
  }

  private async enqueue(p: Params, op: string, fresh: boolean, signal: AbortSignal) {
    const msgId = String(p.msgId);
    const expect = typeof p.expectIncarnation === "number" ? String(p.expectIncarnation) : "";
    const r = await this.jobs.ctl(
      keyOf(p),
      op,
      [hashOf(msgId), expect, fresh ? "1" : "0"],
      signal,
      String(p.text ?? ""),
    );
    if (r.tag === "CH-NOJOB")
      throw new PluginError("permanent", "mu-plugin-ssh: the agent's job is not running");
    if (r.tag === "CH-INC")
      throw new PluginError(
        "permanent",
        `mu-plugin-ssh: the agent is in incarnation ${r.fields[0]}, not ${expect}`,
      );
    if (r.tag !== "CH-OK" && r.tag !== "CH-DUP")
      throw new PluginError("unknown-outcome", `mu-plugin-ssh: unexpected answer ${r.tag}`);
    return { msgId, r };
  }

  /**
   * Opens a watch: answers with a reading at once, then waits on the remote
   * until a turn past afterRuns settles. The reading and the first wait are
   * one session where a wait is free (a session pays the remote shell's
   * start-up files), else a reading now and polls after.
   */
  async watch(p: Params, signal: AbortSignal): Promise<unknown> {
    const key = keyOf(p);
    const ctl = new AbortController();
    let s: State | undefined;
    let rest: Promise<Answer | undefined> | undefined;
    if (this.awaiting < MAX_AWAITS) {
      const given = [p.afterRuns, p.inc].map((v) => (typeof v === "number" ? String(v) : ""));
      const stop = () => ctl.abort();
      signal.addEventListener("abort", stop, { once: true });
      this.awaiting++;
      try {
        const reading = new Promise<Answer>((resolve, reject) => {
          rest = this.jobs.ctlTwice(
            key,
            "watch",
            [...given, String(TEXT_CAP), String(AWAIT_S)],
            ctl.signal,
            resolve,
          );
          rest.catch(reject).finally(() => this.awaiting--);
        });
        s = parseState(await reading);
      } finally {
        signal.removeEventListener("abort", stop);
      }
    } else {
      s = await this.state(key, 0, undefined, signal);
    }
    if (!s) {
      ctl.abort();
      throw new PluginError("permanent", "mu-plugin-ssh: the agent's job is not running");
    }
    const after = typeof p.afterRuns === "number" ? p.afterRuns : s.runs;
    const inc = typeof p.inc === "number" ? p.inc : s.inc;
    const watchId = `w${this.nextWatch++}`;
    this.watches.set(watchId, ctl);
    // After the reply: no notification may come before the watchId it names.
    setTimeout(() => void this.poll(key, watchId, after, inc, ctl.signal, rest), 0);
    return { watchId, initial: observation(s, after), afterRuns: after };
  }

  private async poll(
    key: string,
    watchId: string,
    after: number,
    inc: number,
    signal: AbortSignal,
    first?: Promise<Answer | undefined>,
  ): Promise<void> {
    let begun = first;
    while (!signal.aborted) {
      try {
        const wait = begun
          ? begun.then((r) => (r?.tag === "CH-WAITED" ? "again" : r && parseState(r)))
          : this.awaitTurn(key, after, inc, signal);
        begun = undefined;
        const s = await wait;
        if (signal.aborted) break;
        if (s === "again") continue;
        if (s && s.cur !== inc) {
          writeMessage({
            jsonrpc: "2.0",
            method: "watch/restarted",
            params: { watchId, incarnation: s.cur },
          });
          break;
        }
        if (s && s.runs > after) {
          writeMessage({
            jsonrpc: "2.0",
            method: "watch/settled",
            params: { watchId, observation: observation(s, after) },
          });
          break;
        }
      } catch {
        // a failed wait is retried; the watch ends only by a settle, a restart or a cancel
      }
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
    this.watches.delete(watchId);
  }

  cancelWatch(watchId: string): boolean {
    const w = this.watches.get(watchId);
    w?.abort();
    return w !== undefined;
  }

  cancelAll(): void {
    for (const w of this.watches.values()) w.abort();
  }
}

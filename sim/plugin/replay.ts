import { Redactor } from "../../host/trace/redact.js";
import { ownEndAt, type PluginSession, type TraceRecord } from "../trace/read.js";
import { invalidLine } from "./fault-script.js";
import type { InvalidKind } from "./fault-types.js";
import type { SimIo } from "./sim-io.js";
import type { World } from "./world.js";

// mu-plugin-sim --replay: plays one plugin process recorded in a mu trace.
// Each message mu sends is matched to a recorded one (same method and
// params, else the same method, by order); what the plugin wrote after that
// recorded message is written again after the same delay, its reply ids
// and the values mu chose anew (keys, msgIds) mapped to this run's. What the
// plugin did that was not a reply comes back at its recorded point too: an
// invalid line, an exit of its own, an EOF it ignored, a mu that died.

type Msg = Record<string, unknown>;

interface Step {
  /** The recorded message from mu that this step answers. */
  sent: TraceRecord;
  /** Live id of the message that matched it. */
  liveId?: unknown;
  map: Map<string, string>;
  after: TraceRecord[];
}

/** The framing faults a trace can name; anything else counts as not JSON. */
const FRAMING = new Set<InvalidKind>(["not-json", "bad-utf8", "oversize"]);

function normal(msg: Msg, redact: Redactor): string {
  const params = { ...((msg.params as Msg | undefined) ?? {}) };
  delete params.deadline;
  return JSON.stringify(redact.message({ method: msg.method, params }));
}

/** Pairs the string leaves that differ between a recorded and a live value. */
function pairStrings(rec: unknown, live: unknown, into: Map<string, string>): void {
  if (typeof rec === "string" && typeof live === "string") {
    if (rec !== live && rec.length >= 6) into.set(rec, live);
    return;
  }
  if (rec && live && typeof rec === "object" && typeof live === "object")
    for (const [k, v] of Object.entries(rec)) pairStrings(v, (live as Msg)[k], into);
}

function mapStrings(v: unknown, map: Map<string, string>): unknown {
  if (map.size === 0) return v;
  if (typeof v === "string") {
    let out = v;
    for (const [a, b] of map) out = out.split(a).join(b);
    return out;
  }
  if (Array.isArray(v)) return v.map((x) => mapStrings(x, map));
  if (v && typeof v === "object")
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, mapStrings(x, map)]));
  return v;
}

export class ReplayPlugin {
  private readonly steps: Step[] = [];
  private readonly opening: TraceRecord[] = [];
  private readonly used = new Set<Step>();
  private readonly redact: Redactor;
  private readonly ignoresEof: boolean;
  private readonly byRecordedId = new Map<unknown, Step>();
  private buf = "";
  /** When the recorded plugin ended by itself, if it did. */
  private readonly ended: number | undefined;

  constructor(
    private readonly session: PluginSession,
    content: boolean,
    private readonly io: SimIo,
    private readonly record: (dir: "in" | "out" | "note", msg: unknown) => void = () => {},
  ) {
    this.redact = new Redactor({}, content);
    this.ended = ownEndAt(session);
    let current: Step | undefined;
    for (const e of session.events) {
      if (e.ev === "out" && e.msg) {
        current = { sent: e, map: new Map(), after: [] };
        this.steps.push(current);
        if (e.msg.id !== undefined) this.byRecordedId.set(e.msg.id, current);
      } else if (e.ev === "in" || e.ev === "exit" || e.ev === "stdout-end") {
        // A reply belongs to its request; anything else to the last thing mu sent.
        const id = e.msg && !("method" in e.msg) ? e.msg.id : undefined;
        const owner = (id !== undefined ? this.byRecordedId.get(id) : undefined) ?? current;
        (owner?.after ?? this.opening).push(e);
      }
    }
    const closed = session.events.findIndex((e) => e.ev === "stdin-closed");
    const killed = session.events.findIndex((e) => e.ev === "kill");
    const exited = session.events.findIndex((e) => e.ev === "exit");
    // mu closed stdin, and the plugin was still there to be killed.
    this.ignoresEof = closed !== -1 && killed > closed && (exited === -1 || exited > killed);
  }

  /** What the plugin wrote before mu asked anything, timed from its start. */
  start(): void {
    this.play(this.opening, this.session.at ?? 0, undefined);
  }

  feed(chunk: string): void {
    this.buf += chunk;
    for (let nl = this.buf.indexOf("\n"); nl !== -1; nl = this.buf.indexOf("\n")) {
      const line = this.buf.slice(0, nl);
      this.buf = this.buf.slice(nl + 1);
      let msg: Msg;
      try {
        msg = JSON.parse(line) as Msg;
      } catch {
        this.record("note", { unparseable: line.slice(0, 200) });
        continue;
      }
      this.record("in", msg);
      this.receive(msg);
    }
  }

  end(): void {
    this.record("note", { eof: true, ignored: this.ignoresEof });
    if (this.ignoresEof) this.io.ignoreTermination();
    else this.io.exit(0);
  }

  private receive(msg: Msg): void {
    const step = this.match(msg);
    if (!step) {
      if (msg.id !== undefined && msg.method !== undefined) {
        this.send({
          jsonrpc: "2.0",
          id: msg.id,
          error: {
            code: -32000,
            message: `replay: the trace holds no ${String(msg.method)} here`,
            data: { kind: "permanent" },
          },
        });
      }
      return;
    }
    step.liveId = msg.id;
    pairStrings(step.sent.msg?.params, msg.params, step.map);
    this.play(step.after, step.sent.t, step);
    if (this.session.muKilled && step === this.lastStep()) {
      const last = this.session.events.at(-1)?.t ?? step.sent.t;
      this.io.setTimer(Math.max(0, last - step.sent.t), () => this.io.killParent());
    }
  }

  private lastStep(): Step | undefined {
    return this.steps.at(-1);
  }

  /** The recorded message this live one stands for: same params first, else same method. */
  private match(msg: Msg): Step | undefined {
    const free = this.steps.filter((s) => !this.used.has(s) && s.sent.msg?.method === msg.method);
    const want = normal(msg, this.redact);
    const step = free.find((s) => normal(s.sent.msg ?? {}, this.redact) === want) ?? free[0];
    if (step) this.used.add(step);
    return step;
  }

  private play(events: TraceRecord[], from: number, step: Step | undefined): void {
    for (const e of events) {
      this.io.setTimer(Math.max(0, e.t - from), () => this.emit(e, step));
    }
  }

  private emit(e: TraceRecord, step: Step | undefined): void {
    if (e.ev === "exit" || e.ev === "stdout-end") {
      // Only an end the plugin came to by itself: mu's stop is replayed by mu.
      if (!this.ownEnd(e)) return;
      if (e.unterminated === true) this.io.out('{"jsonrpc":"2.0"');
      const exit = this.session.events.find((x) => x.ev === "exit");
      const code = exit?.code;
      this.io.exit(code === null || code === undefined ? 70 : Number(code));
      return;
    }
    if (e.bad !== undefined) {
      const kind = FRAMING.has(e.bad as InvalidKind) ? (e.bad as InvalidKind) : "not-json";
      // The line itself only when the trace kept content; else one that fails the same way.
      const line = e.raw !== undefined ? `${e.raw}\n` : invalidLine(kind, 0);
      this.record("out", { invalid: e.bad });
      this.io.out(line);
      return;
    }
    if (!e.msg) return;
    const map = step?.map ?? new Map<string, string>();
    const out = mapStrings(e.msg, map) as Msg;
    if (step && !("method" in e.msg) && e.msg.id === step.sent.msg?.id) out.id = step.liveId;
    this.send(out);
  }

  private ownEnd(end: TraceRecord): boolean {
    return this.ended !== undefined && end.t <= this.ended;
  }

  private send(msg: unknown): void {
    this.record("out", msg);
    this.io.out(`${JSON.stringify(msg)}\n`);
  }
}

/**
 * The replaying plugin for a world whose config holds recorded sessions,
 * started; undefined for a simulated world. Each process takes the next
 * session, counted in the world's state.
 */
export function replayFromWorld(world: World, io: SimIo): ReplayPlugin | undefined {
  const replay = world.config().replay;
  if (!replay) return undefined;
  let n = 0;
  world.update((s) => {
    s.replayed = (s.replayed ?? 0) + 1;
    n = s.replayed;
  });
  const session = replay.sessions[n - 1];
  if (!session) {
    io.err(
      `mu-plugin-sim: the trace holds ${replay.sessions.length} plugin process(es), not a number ${n}\n`,
    );
    io.exit(2);
    return undefined;
  }
  // A generated scenario names the recording's world as the runner's
  // placeholder; this world stands in for it.
  const here = mapStrings(session, new Map([["$" + "{world}", world.dir]])) as PluginSession;
  const plugin = new ReplayPlugin(here, replay.content ?? false, io, (dir, msg) =>
    world.record(dir, msg),
  );
  plugin.start();
  return plugin;
}

// Size: the loop applies every fault action in one place, so a reader sees their order at once.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { schemaDigest } from "../../host/protocol/schema.js";
import { Channel } from "./channel.js";
import { merge, PRESETS } from "./declaration.js";
import { noteArrival, repeatOf } from "./dedupe.js";
import { contradicted, firedFaults, invalidLine } from "./fault-script.js";
import type { Action, InvalidKind } from "./fault-types.js";
import { otherMachine, subjectInstance } from "./fence-watch.js";
import { holdUntilReleased } from "./hold.js";
import { hostHandle, Jobs } from "./jobs.js";
import { cancelRunning, Machines } from "./machine.js";
import { MuMessages } from "./mu-messages.js";
import { processIo, type SimIo } from "./sim-io.js";
import { WindDown } from "./wind-down.js";
import type { World } from "./world.js";

// mu-plugin-sim's protocol loop: read a line, record it, apply the faults the
// world scripts for this call, answer. It speaks the protocol strictly
// except where a fault tells it to misbehave.

type Msg = { jsonrpc: "2.0"; id?: number; method?: string; params?: Record<string, unknown> };

/** The params' hash without the deadline, which is new on every send. */
function paramsSha(params: Record<string, unknown>): string {
  const { deadline: _d, ...same } = params;
  return createHash("sha256").update(JSON.stringify(same)).digest("hex");
}

/** How long a "stopping" link's timed-out remote takes to stop after the answer: well inside mu's grace. */
const STOPPING_MS = 1_000;

export class SimPlugin {
  private ignoreEof = false;
  private ignoreShutdown = false;
  /** When the call being answered arrived, before any fault held it up. */
  private arrivedAt = 0;
  private readonly version = "1.0.0";
  /** The instance this plugin process named in its handshake. */
  private spoken: string | undefined;
  /** Where a splitReply fault cuts the next line written, once. */
  private splitNext: number[] | undefined;
  /** The pieces of a cut line still going out, which later writes wait for. */
  private writing: Promise<void> | undefined;

  private readonly machines: Machines;
  private readonly jobs: Jobs;
  private readonly windDown: WindDown;
  private readonly muSide: MuMessages;
  readonly channel: Channel;

  constructor(
    private readonly world: World,
    private readonly io: SimIo = processIo,
  ) {
    this.machines = new Machines(world, io.env, io.turn?.bind(io), (free) => {
      const link = (this.hello() as { seams: { link?: { remoteOnTimeout?: string } } }).seams.link;
      if (link?.remoteOnTimeout === "stopping") io.setTimer(STOPPING_MS, free);
      else free();
    });
    this.windDown = new WindDown(world, io);
    this.muSide = new MuMessages(() => world.now() - (world.config().clockOffsetMs ?? 0));
    const seams = () => (this.hello() as { seams: Record<string, Record<string, unknown>> }).seams;
    this.jobs = new Jobs(
      world,
      () => seams().job as never,
      paramsSha,
      (pid) => io.alive(pid),
      () => this.arrivedAt,
    );
    this.channel = new Channel(
      world,
      () => String(seams().channel?.name ?? "sim"),
      () => (seams().channel?.caps as { dedupe?: string } | undefined)?.dedupe !== "none",
      (method, params) => this.send({ jsonrpc: "2.0", method, params }),
      (ms, fn) => io.setTimer(ms, fn),
      io.pid,
    );
  }

  private write(line: string | Buffer, record: unknown): void {
    this.world.record("out", record);
    const cut = this.splitNext;
    this.splitNext = undefined;
    if (cut === undefined && this.writing === undefined) {
      this.io.out(line);
      return;
    }
    // A line cut into pieces goes out a moment apart; whatever is written
    // meanwhile waits its turn, or it would land inside that line.
    const bytes = typeof line === "string" ? Buffer.from(line, "utf8") : line;
    const done = (this.writing ?? Promise.resolve()).then(() =>
      this.inPieces(bytes, cut ?? [], (b) => this.io.out(b)),
    );
    this.writing = done;
    void done.then(() => {
      if (this.writing === done) this.writing = undefined;
    });
  }

  private send(msg: unknown): void {
    this.write(`${JSON.stringify(msg)}\n`, msg);
  }

  private reply(id: number, result: unknown): void {
    this.send({ jsonrpc: "2.0", id, result });
  }

  hello(): unknown {
    const c = this.world.config();
    const seams = PRESETS[c.preset];
    if (!seams) throw new Error(`unknown preset '${c.preset}'`);
    const base = {
      protocol: 1,
      plugin: { name: "sim", version: this.version },
      instance: c.instance,
      schema: schemaDigest(),
      seams,
    };
    return c.hello ? merge(base, c.hello) : base;
  }

  /** Notes a call about a machine or job made under another instance than this plugin process named. */
  private watchFence(method: string, params: Record<string, unknown>): void {
    const made = subjectInstance(this.world.state(), method, params);
    if (made !== undefined && this.spoken !== undefined && made !== this.spoken)
      this.world.record("note", { otherInstance: { method, made, spoken: this.spoken } });
    const crossed = otherMachine(this.world.state(), method, params);
    if (crossed) this.world.record("note", { otherMachine: crossed });
  }

  /** A new machine or job remembers the instance it was made under. */
  private stamp(method: string, params: Record<string, unknown>): void {
    if (method !== "host.acquire" && method !== "job.start") return;
    const key = String(params.key);
    this.world.update((s) => {
      const made = method === "host.acquire" ? s.hosts?.[key] : s.jobs?.[key];
      if (made && made.instance === undefined && this.spoken !== undefined)
        made.instance = this.spoken;
      const host = method === "host.acquire" ? s.hosts?.[key] : undefined;
      if (host && host.by === undefined) host.by = this.io.pid;
    });
  }

  /** Counts the call and returns the faults that fire on it. */
  private faultsFor(method: string, params: Record<string, unknown>): Action[] {
    return firedFaults(this.world, method, params);
  }

  /** Judges a message from mu as it arrives, before any fault holds it up. */
  heard(msg: Record<string, unknown>): void {
    const why = this.muSide.slip(msg);
    if (why) this.world.record("note", { muSlip: why });
  }

  async handle(msg: Msg): Promise<void> {
    const method = msg.method ?? "";
    if (method === "shutdown") {
      if (!this.ignoreEof && !this.ignoreShutdown) this.windDown.begin();
      return;
    }
    if (method === "$/cancel") return;
    if (msg.id === undefined) return;
    const id = msg.id;
    this.noteArrival(method, msg.params ?? {});
    this.watchFence(method, msg.params ?? {});
    const actions = this.faultsFor(method, msg.params ?? {});
    // Whichever action writes the answer, a split cuts it.
    for (const a of actions) if ("splitReply" in a) this.splitNext = a.splitReply;
    let twice = false;
    let leak: string | undefined;
    let crashAfter = false;
    let canned: { value: unknown } | undefined;
    let patch: Record<string, unknown> | undefined;
    let killAfter = false;
    let closeAfter = false;
    let failAfter: Record<string, unknown> | undefined;
    for (const a of actions) {
      if ("delayMs" in a) await new Promise<void>((r) => this.io.setTimer(a.delayMs, r));
      else if ("hold" in a)
        await holdUntilReleased(this.world, a.hold, (ms, fn) => this.io.setTimer(ms, fn));
      else if ("loseHost" in a) this.loseHost(msg.params ?? {});
      else if ("error" in a) {
        const data: Record<string, unknown> = { kind: a.error.kind };
        // A human error without a remedy would be an invalid message; the
        // fault means a hand-back, so give it one.
        if (a.error.remedy || a.error.kind === "human")
          data.remedy = a.error.remedy ?? "sim: ask a person";
        const error = {
          code: -32000,
          message: a.error.message ?? `sim: scripted ${a.error.kind}`,
          data,
        };
        if (a.error.applied) failAfter = error;
        else return this.send({ jsonrpc: "2.0", id, error });
      } else if ("hang" in a) return;
      else if ("invalid" in a) {
        this.invalid(a.invalid, id, a.line);
        if (!a.thenAnswer) return;
      } else if ("replyTwice" in a) twice = true;
      else if ("crash" in a) {
        if (a.crash === "before") return this.io.exit(70);
        crashAfter = true;
      } else if ("killMu" in a) {
        if (a.killMu === "before") {
          // Before the effect: mu dies and nothing is applied or answered.
          this.io.killParent();
          return;
        } else killAfter = true;
      } else if ("ignoreEof" in a) this.ignoreEof = true;
      else if ("ignoreShutdown" in a) this.ignoreShutdown = true;
      else if ("setInstance" in a)
        this.world.setConfig({ ...this.world.config(), instance: a.setInstance });
      else if ("advanceClockMs" in a) {
        const c = this.world.config();
        this.world.setConfig({ ...c, clockOffsetMs: (c.clockOffsetMs ?? 0) + a.advanceClockMs });
      } else if ("stderr" in a)
        await this.writeStderr(`${a.stderr}${a.unended ? "" : "\n"}`, a.splitAt ?? []);
      else if ("setsidHelper" in a) this.escapeGroup(a.setsidHelper === "holdsPipes");
      else if ("reply" in a) canned = { value: a.reply };
      else if ("patchReply" in a) patch = a.patchReply;
      else if ("settleOnCancel" in a) this.channel.crossCancels = true;
      else if ("restartChannel" in a) this.channel.restart(msg.params?.target);
      else if ("exitAfterMs" in a) this.io.setTimer(a.exitAfterMs, () => this.io.exit(71));
      else if ("groupHelper" in a) this.windDown.helper(a.groupHelper);
      else if ("slowExitMs" in a) this.windDown.slowMs = a.slowExitMs;
      else if ("closeStdout" in a) this.io.closeOut();
      else if ("closeStdin" in a) {
        if (a.closeStdin === true) closeAfter = true;
        else {
          // Closed before the answer, so mu's very next write meets EPIPE.
          this.io.closeInput?.();
          this.io.ignoreTermination();
        }
      } else if (
        // A gone machine runs nothing, however its scripts are run.
        ("execIgnoresTimeout" in a && !this.goneMachine(msg.params?.target)) ||
        "releaseErrorsWhenGone" in a ||
        "releaseOnlyOwn" in a ||
        "acquireIgnoresFence" in a
      ) {
        // Imported here, not at the top, so this hook stays out of the import block others edit.
        const { misbehave } = await import("./misbehave.js");
        const r = await misbehave(a, this.world, msg.params ?? {}, this.io.env, this.io.pid);
        if ("error" in r) return this.send({ jsonrpc: "2.0", id, error: r.error });
        canned = r;
      } else if ("leakCanary" in a) {
        const canary = this.io.env.MU_PLUGIN_CANARY ?? "";
        if (a.leakCanary === "stderr")
          this.io.err(`${a.at ? canaryLine(canary, a.at) : `canary ${canary}`}\n`);
        else leak = canary;
      }
    }
    let result = canned ?? (await this.answer(method, msg.params ?? {}, leak));
    // The effect is applied as usual; only what the reply says is wrong.
    if (patch && result && "value" in result) {
      result = { value: merge(result.value, patch) };
      const wrong = contradicted(msg.params ?? {}, result.value);
      if (wrong) this.world.record("note", { wrongReply: wrong });
    }
    if (result && "refused" in result) {
      this.send({
        jsonrpc: "2.0",
        id,
        error: { code: -32000, message: String(result.refused), data: { kind: "permanent" } },
      });
      return;
    }
    if (result && method === "initialize")
      this.spoken = (result.value as { instance?: string }).instance;
    // Even a crash after the effect leaves what it made stamped.
    if (result) this.stamp(method, msg.params ?? {});
    if (killAfter) this.io.killParent();
    if (crashAfter) return this.io.exit(70);
    if (failAfter && result) return this.send({ jsonrpc: "2.0", id, error: failAfter });
    if (result === undefined) {
      this.send({
        jsonrpc: "2.0",
        id,
        error: {
          code: -32601,
          message: `sim: ${method} is not simulated`,
          data: { kind: "permanent" },
        },
      });
      return;
    }
    this.reply(id, result.value);
    this.channel.afterReply();
    if (closeAfter) this.io.closeInput?.();
    if (twice) this.reply(id, result.value);
  }

  private async answer(
    method: string,
    params: Record<string, unknown>,
    leak?: string,
  ): Promise<{ value: unknown } | { refused: string } | undefined> {
    if (method.startsWith("job.")) return this.jobs.answer(method, params);
    if (method.startsWith("channel.")) return this.channel.answer(method, params);
    const gone = method.startsWith("link.") ? this.goneMachine(params.target) : undefined;
    if (gone) return { refused: `sim: the machine ${gone} is gone; nothing runs there` };
    switch (method) {
      case "initialize":
        return { value: this.hello() };
      case "host.acquire": {
        const result = this.acquire(params);
        if (result === undefined)
          return {
            refused: `sim: key ${String(params.key)} was fenced by a lookup; no machine made`,
          };
        return { value: result };
      }
      case "host.lookup": {
        const key = String(params.key);
        const now = this.world.now();
        let h: { handle: string; released: boolean } | undefined;
        this.world.update((s) => {
          h = s.hosts?.[key];
          if (!h && params.fence === true) s.fenced = { ...s.fenced, [`host:${key}`]: now };
        });
        // A released machine's key was acquired all the same: found, as for a stopped job.
        return { value: h ? { found: { handle: h.handle } } : { none: true } };
      }
      case "host.release":
        return { value: this.release(String(params.key)) };
      case "host.status": {
        const handle = hostHandle(params.target) ?? "";
        const h = Object.values(this.world.state().hosts ?? {}).find((x) => x.handle === handle);
        return {
          value:
            h && !h.released
              ? { state: "up", handle }
              : { state: "gone", reason: "no such machine in the sim" },
        };
      }
      case "link.checkSteps":
        // A leak rides in the detail, where no check compares the text exactly.
        return {
          value: [
            {
              step: String(params.phase),
              ok: true,
              detail: leak ? `the sim answers ${leak}` : "the sim answers",
            },
          ],
        };
      case "link.exec":
        return {
          value: await this.machines.exec(
            params.target,
            String(params.script ?? ""),
            String(params.cwd ?? "."),
            Number(params.timeoutMs ?? 20_000),
            leak,
          ),
        };
      case "link.fetch":
        return {
          value: await this.machines.fetch(
            params.target,
            String(params.remoteCwd),
            String(params.localRepo),
            Number(params.timeoutMs ?? 20_000),
          ),
        };
      case "link.push":
        return {
          value: await this.machines.push(
            params.target,
            String(params.localRepo),
            String(params.remoteRepo),
            String(params.rev),
            Number(params.timeoutMs ?? 20_000),
          ),
        };
      default:
        return undefined;
    }
  }

  /**
   * A keyed call's arrival, before any fault holds it up: its dedupe window
   * is reckoned from the key's first arrival (sim/plugin/dedupe.ts).
   */
  private noteArrival(method: string, params: Record<string, unknown>): void {
    this.arrivedAt = this.world.now();
    const key =
      method === "job.start"
        ? `job:${String(params.key)}`
        : method === "host.acquire"
          ? String(params.key)
          : undefined;
    if (key === undefined) return;
    const at = this.arrivedAt;
    this.world.update((s) => noteArrival(s, key, at));
  }

  /**
   * Creates a machine, unless an exact repeat of a recent acquire asks again:
   * then the first result comes back and nothing new is made, as a plugin
   * that declares exact dedupe promises. Undefined: the key is fenced.
   */
  private acquire(params: Record<string, unknown>): unknown {
    const key = String(params.key);
    const sha = paramsSha(params);
    const windowMs = (
      this.hello() as { seams: { host?: { acquire?: { dedupe?: { windowMs: number } } } } }
    ).seams.host?.acquire?.dedupe?.windowMs;
    const now = this.world.now();
    let result: unknown;
    this.world.update((s) => {
      const seen = repeatOf(s, key, sha, windowMs, this.arrivedAt);
      if (seen) {
        result = seen.result;
        return;
      }
      if (s.fenced?.[`host:${key}`] !== undefined && !s.hosts?.[key]) return;
      const effect = `host.acquire:${key}`;
      s.effects[effect] = (s.effects[effect] ?? 0) + 1;
      const handle = `sim-${key}-${s.effects[effect]}`;
      s.hosts = { ...s.hosts, [key]: { handle, released: false } };
      result = { handle };
      s.dedupe = { ...s.dedupe, [key]: { sha, result, at: now } };
    });
    return result;
  }

  /** The handle a call names when that machine was released or lost: it no longer exists. */
  private goneMachine(target: unknown): string | undefined {
    const handle = hostHandle(target);
    if (handle === undefined) return undefined;
    const h = Object.values(this.world.state().hosts ?? {}).find((x) => x.handle === handle);
    return h?.released ? handle : undefined;
  }

  /** The provider loses the machine a host call names: gone, and most of its jobs with it. */
  private loseHost(params: Record<string, unknown>): void {
    const handle = hostHandle(params.target);
    this.world.update((s) => {
      const h = Object.values(s.hosts ?? {}).find((x) => x.handle === handle);
      if (!h || h.released) return;
      h.released = true;
      h.lost = true;
      this.jobs.hostLost(s, h.handle);
    });
    if (handle !== undefined) this.machines.remove({ host: { handle } });
  }

  /** Idempotent: releasing what is already released changes nothing. */
  private release(key: string): null {
    let handle: string | undefined;
    this.world.update((s) => {
      const h = s.hosts?.[key];
      if (h && !h.released) {
        h.released = true;
        handle = h.handle;
        const effect = `host.release:${key}`;
        s.effects[effect] = (s.effects[effect] ?? 0) + 1;
      }
    });
    // Its trees go with it, as the gone status that follows says.
    if (handle !== undefined) this.machines.remove({ host: { handle } });
    return null;
  }

  /** A stderr line, in writes cut at the given byte offsets and made a moment apart. */
  private writeStderr(text: string, splitAt: number[]): Promise<void> {
    return this.inPieces(Buffer.from(text, "utf8"), splitAt, (b) => this.io.err(b));
  }

  /** Bytes in writes cut at the offsets inside them, a moment apart. */
  private async inPieces(
    bytes: Buffer,
    splitAt: number[],
    put: (b: Buffer) => void,
  ): Promise<void> {
    let from = 0;
    for (const at of [...splitAt.filter((n) => n < bytes.length), bytes.length]) {
      if (from > 0) await new Promise<void>((r) => this.io.setTimer(25, r));
      put(bytes.subarray(from, at));
      from = at;
    }
  }

  private invalid(kind: InvalidKind, id: number, raw?: string): void {
    this.write(invalidLine(kind, id, raw), { invalid: kind });
    // The line is cut short by the plugin's death: its stdout ends there.
    if (kind === "unterminated") this.io.exit(70);
  }

  /** A helper in a session of its own: what the contract suite must catch. */
  private escapeGroup(holdsPipes: boolean): void {
    // Polls for the release file (a tenth of a second, at most 600 times)
    // rather than sleeping a fixed time, so a scenario can end it as soon as
    // mu has shown it did not wait.
    const wait =
      'i=0; while [ ! -e "$0/release" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done; ' +
      '[ -e "$0/release" ] || touch "$0/helper-gave-up"';
    const child = holdsPipes
      ? spawn("/bin/sh", ["-c", wait, this.world.dir], {
          detached: true,
          stdio: ["ignore", "inherit", "inherit"],
        })
      : spawn("/bin/sh", ["-c", "sleep 30"], { detached: true, stdio: "ignore" });
    child.unref();
    this.world.record("note", { escaped: child.pid });
  }

  /**
   * Stdin's end cancels the scripts in flight, so the queue behind them
   * drains and the process exits within the grace however long they run.
   */
  cancelInFlight(): void {
    if (!this.ignoreEof) cancelRunning();
  }

  onEof(): void {
    this.world.record("note", { eof: true, ignored: this.ignoreEof });
    if (!this.ignoreEof) {
      this.windDown.begin();
      return;
    }
    // Ignore stdin's end, SIGTERM included: only a SIGKILL of the group ends us.
    this.io.ignoreTermination();
  }
}

/** A line of x with the canary written at each character offset, then a few words more. */
function canaryLine(canary: string, at: readonly number[]): string {
  let line = "";
  for (const i of at) line = line.padEnd(i, "x").slice(0, i) + canary;
  return `${line} and more`;
}

import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { firedFaults, invalidLine } from "./fault-script.js";
import type { Action } from "./fault-types.js";
import { holdUntilReleased } from "./hold.js";
import type { SimIo } from "./sim-io.js";
import type { World } from "./world.js";

// mu-plugin-sim --proxy: stands between mu and a real plugin, passes every
// line through unchanged, and applies the world's fault script on the way,
// so the scenarios that prove the replay table can run against a real
// plugin too. The real plugin is a child in the proxy's own process group:
// mu's stop sequence and group kill reach it as they would unproxied.

type Msg = Record<string, unknown>;

/** Faults a proxy can apply; the rest need the simulated world's insides. */
const IN_FRONT = new Set([
  "delayMs",
  "hold",
  "error",
  "hang",
  "invalid",
  "replyTwice",
  "crash",
  "killMu",
  "ignoreEof",
  "setInstance",
  "stderr",
  "reply",
  "exitAfterMs",
]);

interface After {
  method: string;
  twice?: boolean;
  crash?: boolean;
  killMu?: boolean;
  /** The error to answer in place of the plugin's result, once it has applied the call. */
  fail?: Msg;
}

export class FaultProxy {
  private readonly child: ChildProcessWithoutNullStreams;
  private fromMu = "";
  private fromPlugin = Buffer.alloc(0);
  private readonly after = new Map<unknown, After>();
  private ignoreEof = false;
  /** Calls from mu not yet passed on (a hold or a delay in front of them). */
  private readonly inFront = new Set<Promise<void>>();

  /**
   * `asName`: the name this proxy was run as (its launcher's mu-plugin-<name>).
   * mu binds a registration to the executable's name and the handshake's, so
   * the proxy answers under its own: registered as `sim` in front of a plugin
   * that calls itself `ssh`, it says `sim`.
   */
  constructor(
    argv: readonly string[],
    private readonly world: World,
    private readonly io: SimIo,
    private readonly asName?: string,
  ) {
    this.child = spawn(argv[0] ?? "", argv.slice(1), { stdio: ["pipe", "pipe", "pipe"] });
    this.child.stdout.on("data", (b: Buffer) => this.pluginBytes(b));
    this.child.stderr.on("data", (b: Buffer) => this.io.err(b.toString("utf8")));
    // A plugin that died must not kill the proxy with EPIPE: its exit says it.
    this.child.stdin.on("error", () => {});
    this.child.on("error", (err) => {
      this.io.err(`mu-plugin-sim: cannot start the proxied plugin: ${err.message}\n`);
      this.io.exit(70);
    });
    this.child.on("exit", (code, signal) => {
      this.world.record("note", { proxied: { code, signal } });
      if (!this.ignoreEof) this.io.exit(code ?? 70);
    });
  }

  feed(chunk: string): void {
    this.fromMu += chunk;
    for (let nl = this.fromMu.indexOf("\n"); nl !== -1; nl = this.fromMu.indexOf("\n")) {
      const line = this.fromMu.slice(0, nl);
      this.fromMu = this.fromMu.slice(nl + 1);
      const passing = this.muLine(line);
      this.inFront.add(passing);
      void passing.finally(() => this.inFront.delete(passing));
    }
  }

  end(): void {
    this.world.record("note", { eof: true, ignored: this.ignoreEof });
    if (this.ignoreEof) this.io.ignoreTermination();
    // As the sim ends only after the calls it already read: a held call
    // still reaches the plugin behind, and the proxy outlives mu until then.
    else void Promise.allSettled([...this.inFront]).then(() => this.child.stdin.end());
  }

  private toPlugin(line: string): void {
    if (this.child.stdin.writable) this.child.stdin.write(`${line}\n`);
  }

  private toMu(line: string | Buffer, record: unknown): void {
    this.world.record("out", record);
    this.io.out(line);
  }

  private async muLine(line: string): Promise<void> {
    let msg: Msg;
    try {
      msg = JSON.parse(line) as Msg;
    } catch {
      this.toPlugin(line);
      return;
    }
    this.world.record("in", msg);
    const method = String(msg.method ?? "");
    const id = msg.id;
    if (id === undefined || method === "") {
      this.toPlugin(line);
      return;
    }
    const after: After = { method };
    for (const a of firedFaults(this.world, method, (msg.params as Msg | undefined) ?? {})) {
      const kind = Object.keys(a)[0] ?? "";
      if (!IN_FRONT.has(kind)) {
        this.world.record("note", { proxyCannot: kind });
        continue;
      }
      if (await this.instead(a, id as number, after)) return;
    }
    this.after.set(id, after);
    this.toPlugin(line);
  }

  /** Applies one fault before the request goes on; true when it must not go on. */
  private async instead(a: Action, id: number, after: After): Promise<boolean> {
    if ("delayMs" in a) await new Promise<void>((r) => this.io.setTimer(a.delayMs, r));
    else if ("hold" in a)
      await holdUntilReleased(this.world, a.hold, (ms, fn) => this.io.setTimer(ms, fn));
    else if ("error" in a) {
      const data: Msg = { kind: a.error.kind };
      if (a.error.remedy || a.error.kind === "human")
        data.remedy = a.error.remedy ?? "sim: ask a person";
      const error = {
        code: -32000,
        message: a.error.message ?? `sim: scripted ${a.error.kind}`,
        data,
      };
      if (a.error.applied) {
        after.fail = error;
        return false;
      }
      const reply = { jsonrpc: "2.0", id, error };
      this.toMu(`${JSON.stringify(reply)}\n`, reply);
      return true;
    } else if ("hang" in a) return true;
    else if ("invalid" in a) {
      this.toMu(invalidLine(a.invalid, id, a.line), { invalid: a.invalid });
      if (a.invalid === "unterminated") this.crash(70);
      return true;
    } else if ("reply" in a) {
      const reply = { jsonrpc: "2.0", id, result: a.reply };
      this.toMu(`${JSON.stringify(reply)}\n`, reply);
      return true;
    } else if ("replyTwice" in a) after.twice = true;
    else if ("crash" in a) {
      if (a.crash === "before") return this.crash();
      after.crash = true;
    } else if ("killMu" in a) {
      if (a.killMu === "before") {
        this.io.killParent();
        return true;
      }
      after.killMu = true;
    } else if ("ignoreEof" in a) this.ignoreEof = true;
    else if ("setInstance" in a) {
      const instance = a.setInstance;
      this.world.update((s) => {
        s.proxyInstance = instance;
      });
    } else if ("stderr" in a) this.io.err(`${a.stderr}\n`);
    else if ("exitAfterMs" in a) this.io.setTimer(a.exitAfterMs, () => this.crash(71));
    return false;
  }

  /** The plugin dies as one: the real plugin first, then the proxy. */
  private crash(code = 70): true {
    this.child.kill("SIGKILL");
    this.io.exit(code);
    return true;
  }

  private pluginBytes(chunk: Buffer): void {
    this.fromPlugin = Buffer.concat([this.fromPlugin, chunk]);
    for (let nl = this.fromPlugin.indexOf(0x0a); nl !== -1; nl = this.fromPlugin.indexOf(0x0a)) {
      const bytes = this.fromPlugin.subarray(0, nl + 1);
      this.fromPlugin = this.fromPlugin.subarray(nl + 1);
      this.pluginLine(Buffer.from(bytes));
    }
  }

  /** A line from the real plugin: passed on byte for byte unless a fault says otherwise. */
  private pluginLine(bytes: Buffer): void {
    let msg: Msg | undefined;
    try {
      msg = JSON.parse(bytes.toString("utf8")) as Msg;
    } catch {
      this.toMu(bytes, { invalid: "from the proxied plugin" });
      return;
    }
    const after = msg.method === undefined ? this.after.get(msg.id) : undefined;
    if (after) this.after.delete(msg.id);
    if (after?.method === "initialize") {
      const changed = this.world.state().proxyInstance;
      let result = msg.result as Msg | undefined;
      const named = result?.plugin as Msg | undefined;
      if (result && named && this.asName !== undefined && named.name !== this.asName) {
        result = { ...result, plugin: { ...named, name: this.asName } };
      }
      if (changed !== undefined && result) result = { ...result, instance: changed };
      if (result !== msg.result) {
        msg = { ...msg, result };
        bytes = Buffer.from(`${JSON.stringify(msg)}\n`);
      }
    }
    if (after?.killMu) this.io.killParent();
    if (after?.crash) {
      this.crash();
      return;
    }
    if (after?.fail && "result" in msg) {
      const reply = { jsonrpc: "2.0", id: msg.id, error: after.fail };
      this.toMu(`${JSON.stringify(reply)}\n`, reply);
      return;
    }
    this.toMu(bytes, msg);
    if (after?.twice) this.toMu(bytes, msg);
  }
}

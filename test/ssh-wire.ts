import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { packageRoot } from "../host/package-root.js";

// Talks to the built mu-plugin-ssh as mu would: its own process group,
// one JSON-RPC object per line. For the tests that look at replies closely.

export const sshPluginBin = join(packageRoot(), "plugins/ssh/bin/mu-plugin-ssh");

export interface Reply {
  id?: number;
  result?: unknown;
  error?: { message: string; data: { kind: string; remedy?: string } };
}

export class Wire {
  readonly child: ChildProcess;
  private next = 1;
  private buf = "";
  private readonly pending = new Map<number, (r: Reply) => void>();
  stderr = "";
  /** The target every call carries (a test sets job and agent). */
  target: Record<string, unknown> = { host: { name: "box" } };
  readonly lines: string[] = [];
  readonly notes: { method: string; params: Record<string, unknown> }[] = [];
  readonly exited: Promise<number | null>;

  /** `bin`: the launcher, or a link to it under another mu-plugin-<name>. */
  constructor(args: string[], env: NodeJS.ProcessEnv = process.env, bin = sshPluginBin) {
    this.child = spawn(bin, args, {
      detached: true,
      stdio: ["pipe", "pipe", "pipe"],
      env,
    });
    this.exited = new Promise((r) => this.child.on("exit", (c) => r(c)));
    this.child.stdout?.setEncoding("utf8");
    this.child.stdout?.on("data", (s: string) => {
      this.buf += s;
      for (let nl = this.buf.indexOf("\n"); nl >= 0; nl = this.buf.indexOf("\n")) {
        const line = this.buf.slice(0, nl);
        this.buf = this.buf.slice(nl + 1);
        this.lines.push(line);
        const m = JSON.parse(line) as Reply;
        if (m.id !== undefined) this.pending.get(m.id)?.(m);
        else this.notes.push(m as unknown as { method: string; params: Record<string, unknown> });
      }
    });
    this.child.stderr?.on("data", (b: Buffer) => {
      this.stderr += b.toString("utf8");
    });
  }

  call(method: string, params: Record<string, unknown> = {}): Promise<Reply> {
    const id = this.next++;
    const p = new Promise<Reply>((r) => this.pending.set(id, r));
    const full = { target: this.target, deadline: Date.now() + 120_000, ...params };
    this.child.stdin?.write(
      `${JSON.stringify({ jsonrpc: "2.0", id, method, params: method === "initialize" ? params : full })}\n`,
    );
    return p;
  }

  /** Waits for a notification about this watch. */
  async note(watchId: string): Promise<{ method: string; params: Record<string, unknown> }> {
    for (;;) {
      const n = this.notes.find((x) => x.params.watchId === watchId);
      if (n) return n;
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  hello(): Promise<Reply> {
    return this.call("initialize", { protocol: { min: 1, max: 1 }, mu: "5" });
  }

  /** Closes stdin as a SIGKILLed mu would, and waits for the plugin to go. */
  async close(): Promise<number | null> {
    this.child.stdin?.end();
    return this.exited;
  }

  /** True while anything is left in the plugin's process group. */
  groupAlive(): boolean {
    try {
      process.kill(-(this.child.pid ?? 0), 0);
      return true;
    } catch {
      return false;
    }
  }

  kill(): void {
    try {
      process.kill(-(this.child.pid ?? 0), "SIGKILL");
    } catch {
      // already gone
    }
  }
}

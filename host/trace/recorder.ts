import { LineFramer } from "../plugin/framing.js";
import { FirstLine, STDERR_LINE_MAX } from "../plugin/stderr-line.js";
import type { ChildProcess, Ports, ProcessSpawner } from "../ports/types.js";
import type { Redactor } from "./redact.js";
import type { TraceSink } from "./trace-file.js";

// What one mu invocation did, as NDJSON records: how it was called, each
// plugin it started with every line both ways, and how it ended. The taps
// sit on the ports (the spawner and crash), so the plugin code itself does
// not know it is traced.

/** mu's own environment variables a replay needs to run the invocation again. */
const REPLAYED_ENV = /^MU_(CRASH_AT|MUX|WORKSTREAM|[A-Z_]+_MS)$/;

export class Trace {
  private plugins = 0;
  private ended = false;

  constructor(
    private readonly sink: TraceSink,
    readonly redact: Redactor,
  ) {}

  get path(): string {
    return this.sink.path;
  }

  record(ev: string, fields: Record<string, unknown> = {}): void {
    this.sink.write({ t: this.sink.now(), ev, ...fields });
  }

  begin(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): void {
    const kept: Record<string, string> = {};
    for (const [k, v] of Object.entries(env))
      if (v !== undefined && REPLAYED_ENV.test(k)) kept[k] = this.redact.mask(v);
    this.record("mu", {
      v: 1,
      at: Date.now(),
      pid: process.pid,
      argv: this.redact.argv(argv),
      env: kept,
      content: this.redact.content,
    });
  }

  /** The last record: how mu ended. Only the first call counts. */
  end(how: { exit: number } | { signal: string }): void {
    if (this.ended) return;
    this.ended = true;
    this.record("end", how);
  }

  /** Ports whose spawner and crash are tapped. */
  ports(base: Ports): Ports {
    return {
      ...base,
      spawner: this.spawner(base.spawner),
      note: (ev, fields) => this.record(ev, fields),
      crash: () => {
        this.record("crash", { point: base.env.MU_CRASH_AT ?? null });
        this.ended = true;
        return base.crash();
      },
    };
  }

  private spawner(base: ProcessSpawner): ProcessSpawner {
    return {
      spawn: async (argv, opts) => {
        this.redact.addSecrets(opts.env);
        const p = ++this.plugins;
        let child: ChildProcess;
        try {
          child = await base.spawn(argv, opts);
        } catch (err) {
          this.record("spawn", {
            p,
            argv: argv.map((a) => this.redact.mask(a)),
            failed: String((err as { code?: unknown }).code ?? "error"),
          });
          throw err;
        }
        this.record("spawn", { p, argv: argv.map((a) => this.redact.mask(a)), pid: child.pid });
        return this.tap(p, child);
      },
    };
  }

  private tap(p: number, child: ChildProcess): ChildProcess {
    const sent = new LineFramer();
    const got = new LineFramer();
    // Held past the shown cut by the longest secret, so one that starts
    // before the cut is masked whole before the line is cut.
    const stderr = new FirstLine(STDERR_LINE_MAX + this.redact.longest);
    let stderrDone = false;
    const noteStderr = () => {
      if (stderrDone || stderr.line === undefined) return;
      stderrDone = true;
      const line = stderr.whole ? stderr.line : this.redact.maskCut(stderr.line);
      this.record("stderr", { p, line: this.redact.text(line, STDERR_LINE_MAX) });
    };
    const lines = (dir: "out" | "in", framer: LineFramer, chunk: Uint8Array) => {
      for (const f of framer.push(chunk)) {
        if ("error" in f) this.record(dir, { p, bad: f.error.kind });
        else this.line(p, dir, f.line);
      }
    };
    void child.exited.then((s) => {
      noteStderr();
      this.record("exit", { p, code: s.code, signal: s.signal });
    });
    return {
      pid: child.pid,
      exited: child.exited,
      write: (bytes) => {
        const ok = child.write(bytes);
        if (ok) lines("out", sent, bytes);
        return ok;
      },
      closeInput: () => {
        this.record("stdin-closed", { p });
        child.closeInput();
      },
      onStdout: (fn) =>
        child.onStdout((c) => {
          lines("in", got, c);
          fn(c);
        }),
      onStderr: (fn) =>
        child.onStderr((c) => {
          stderr.push(c);
          if (c.includes(0x0a)) noteStderr();
          fn(c);
        }),
      onStdoutEnd: (fn) =>
        child.onStdoutEnd(() => {
          this.record("stdout-end", { p, unterminated: got.pending() > 0 });
          fn();
        }),
      killGroup: (signal) => {
        this.record("kill", { p, signal });
        child.killGroup(signal);
      },
      // Tracing must not change what mu does: without these a traced mu
      // missed a plugin's closed stdin and waited on an escaped helper.
      ...(child.onInputError ? { onInputError: (fn) => child.onInputError?.(fn) } : {}),
      ...(child.releasePipes ? { releasePipes: () => child.releasePipes?.() } : {}),
    };
  }

  private line(p: number, dir: "out" | "in", line: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(line);
    } catch {
      msg = undefined;
    }
    if (msg === null || typeof msg !== "object" || Array.isArray(msg)) {
      const kept = this.redact.text(line);
      this.record(dir, {
        p,
        bad: "not-json",
        ...(this.redact.content ? { raw: kept } : { digest: kept }),
      });
      return;
    }
    this.record(dir, { p, msg: this.redact.message(msg as Record<string, unknown>) });
  }
}

import { spawn } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, readlinkSync, symlinkSync } from "node:fs";
import { join } from "node:path";
import pidtree from "pidtree";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { MuError } from "../host/errors.js";
import { packageRoot } from "../host/package-root.js";
import { NoAnswer } from "../host/plugin/call-errors.js";
import { Supervisor } from "../host/plugin/supervisor.js";
import { realPorts } from "../host/ports/real.js";
import { protocolChecks } from "../host/protocol/checks.js";
import { callPlugin } from "../host/seams/call.js";
import { muError } from "./helpers.js";
import { channelSeam, type FixtureDir, fixtureDir, hello, LINK } from "./plugin-fixtures.js";

const EXEC_OK = { exitCode: 0, stdout: "", stderr: "", partial: false };
let fx: FixtureDir;
let sup: Supervisor;
const ports = realPorts({
  PATH: process.env.PATH,
  MU_DB_PATH: "/nowhere/mu.db",
  MU_STATE_DIR: "/nowhere",
  KEEP: "yes",
});

beforeEach(() => {
  fx = fixtureDir();
  sup = new Supervisor(ports, protocolChecks());
});
afterEach(async () => {
  await sup.close();
  fx.done();
});

// A killed process may linger as a zombie until whoever adopted it reaps it;
// liveness counts it gone, as mu does.
const alive = (pid: number) => ports.liveness.startOf(pid) !== null;

const refusal = muError;

/** Polls a condition the test cannot be told about (a file another process writes). */
async function waitFor(cond: () => boolean): Promise<void> {
  while (!cond()) await new Promise((r) => setTimeout(r, 20));
}

const call = (
  name: string,
  argv: string[],
  method = "link.exec",
  timeoutMs = 5000,
  signal?: AbortSignal,
) =>
  sup.call(
    { name, argv },
    method,
    { target: { host: { name: "h" } }, script: "true", cwd: ".", timeoutMs: 1000 },
    {
      timeoutMs,
      ...(signal ? { signal } : {}),
    },
  );

describe("trust, checked before every start", () => {
  it("refuses a relative path", async () => {
    const e = await refusal(sup.ready({ name: "x", argv: ["mu-plugin-x"] }));
    expect([e.code, e.exit]).toEqual(["trust.absolute", 4]);
  });

  it("refuses a basename that is not mu-plugin-<name>", async () => {
    const argv = fx.plugin("x", {}, "plugin-x");
    const e = await refusal(sup.ready({ name: "x", argv }));
    expect(e.code).toBe("trust.basename");
  });

  it("refuses a directory", async () => {
    const d = join(fx.dir, "mu-plugin-d");
    mkdirSync(d);
    expect((await refusal(sup.ready({ name: "d", argv: [d] }))).code).toBe("trust.regular");
  });

  it.each([
    [0o775, "its group"],
    [0o757, "everyone"],
  ])("refuses mode %s (writable by %s)", async (mode, who) => {
    const argv = fx.plugin("w", {});
    chmodSync(argv[0] as string, mode);
    const e = await refusal(sup.ready({ name: "w", argv }));
    expect(e.code).toBe("trust.writable");
    expect(e.message).toContain(who);
  });

  it("starts nothing that is not executable, in one line with exit 4", async () => {
    const argv = fx.plugin("nx", {});
    chmodSync(argv[0] as string, 0o644);
    const e = await refusal(sup.ready({ name: "nx", argv }));
    expect([e.code, e.exit]).toEqual(["plugin.start", 4]);
    expect(e.line()).toMatch(
      /^mu: plugin: 'nx' could not be started: .*EACCES.*; check that .* is executable$/,
    );
  });

  it("follows a symlink and judges its target", async () => {
    const argv = fx.plugin("real", {});
    chmodSync(argv[0] as string, 0o777);
    const link = join(fx.dir, "mu-plugin-ln");
    symlinkSync(argv[0] as string, link);
    expect((await refusal(sup.ready({ name: "ln", argv: [link, ...argv.slice(1)] }))).code).toBe(
      "trust.writable",
    );
  });

  it.skipIf(process.getuid?.() !== 0)("refuses a file another user owns", async () => {
    const argv = fx.plugin("o", {});
    chownSync(argv[0] as string, 65534, 65534);
    expect((await refusal(sup.ready({ name: "o", argv }))).code).toBe("trust.owner");
  });
});

describe("load rules", () => {
  const link = LINK;
  const job = {
    kind: "k",
    view: "bound",
    handle: "pane",
    start: { lookup: true, fenceKey: true },
    checks: [],
  };
  const channel = channelSeam("c");
  const cases: [string, Record<string, unknown>][] = [
    ["load.protocol.range", { hello: { ...hello("p"), protocol: 2 } }],
    ["load.handshake.error", { helloError: { kind: "permanent", message: "no" } }],
    ["load.name.mismatch", { hello: hello("other") }],
    ["load.schema.digest", { hello: { ...hello("p"), schema: `sha256:${"0".repeat(64)}` } }],
    ["load.declaration.schema", { hello: hello("p", { link: { ...link, extra: 1 } }) }],
    ["load.declaration.schema", { hello: hello("p", { link: { ...link, slots: "both" } }) }],
    ["load.declaration.schema", { hello: hello("p", { telepathy: {} }) }],
    ["load.seams.none", { hello: hello("p", {}) }],
    [
      "load.host.needs-link",
      { hello: hello("p", { host: { acquire: { lookup: true, fenceKey: true } }, job }) },
    ],
    [
      "load.key.replayable",
      { hello: hello("p", { link, job, host: { acquire: { lookup: false, fenceKey: false } } }) },
    ],
    [
      "load.key.replayable",
      {
        hello: hello("p", {
          link,
          job: { ...job, handle: "reply", start: { lookup: false, fenceKey: false } },
        }),
      },
    ],
    [
      "load.channel.watch",
      { hello: hello("p", { channel: { ...channel, caps: { ...channel.caps, watch: "none" } } }) },
    ],
    [
      "load.channel.settle-text",
      {
        hello: hello("p", {
          channel: { ...channel, caps: { ...channel.caps, settleText: "none" } },
        }),
      },
    ],
    [
      "load.channel.fence",
      {
        hello: hello("p", {
          channel: { ...channel, caps: { ...channel.caps, fence: "incarnation" } },
        }),
      },
    ],
    ["load.job.channel", { hello: hello("p", { link, job: { ...job, channel: "d" }, channel }) }],
    [
      "load.job.at-start-handle",
      {
        hello: hello("p", { link, job: { ...job, channel: "c", firstTurn: "at-start" }, channel }),
      },
    ],
    [
      "load.job.env-channel",
      {
        hello: hello("p", {
          link,
          job: {
            ...job,
            honours: { command: false, env: false, sockets: false, roles: ["full-access"] },
          },
        }),
      },
    ],
  ];
  it.each(cases)("refuses with %s", async (code, cfg) => {
    const argv = fx.plugin("p", cfg);
    const e = await refusal(sup.ready({ name: "p", argv }));
    expect(e.code).toBe(code);
    expect(e.exit).toBe(4);
    expect(e.line()).toMatch(
      new RegExp(`^mu: plugin: 'p' refused \\(${code.slice(5).replace(/\./g, "\\.")}\\): `),
    );
  });

  it("refuses a seam the caller needs", async () => {
    const argv = fx.plugin("p", {});
    const e = await refusal(sup.ready({ name: "p", argv }, ["job"]));
    expect(e.code).toBe("load.seam.missing");
    expect(e.line()).toMatch(
      /mu plugin list shows the seams each plugin declares; use one that declares 'job'$/,
    );
  });

  it("refuses a declaration that differs from the recorded one, but not a new instance", async () => {
    const argv = fx.plugin("p", { hello: { ...hello("p"), instance: "elsewhere" } });
    const recorded = { protocol: 1, seams: { link: LINK } };
    await expect(sup.ready({ name: "p", argv, declaration: recorded })).resolves.toBeTruthy();
    await sup.close();
    const sup2 = new Supervisor(ports, protocolChecks());
    const e = await refusal(
      sup2.ready({
        name: "p",
        argv,
        declaration: { protocol: 1, seams: { link: { ...LINK, fetch: true } } },
      }),
    );
    await sup2.close();
    expect(e.code).toBe("load.declaration.changed");
  });

  it("loads a provider with host and link but no job", async () => {
    const argv = fx.plugin("p", {
      hello: hello("p", { link, host: { acquire: { lookup: true, fenceKey: true } } }),
    });
    await expect(sup.ready({ name: "p", argv })).resolves.toBeTruthy();
  });
});

describe("invalid messages break the plugin for the invocation", () => {
  const kinds: [string, Record<string, unknown>][] = [
    ["not JSON", { raw: "{nope" }],
    ["unknown field", { raw: '{"jsonrpc":"2.0","id":2,"result":null,"extra":1}' }],
    ["bad UTF-8", { rawBytes: [0x7b, 0xff, 0x7d] }],
    ["oversize", { oversize: true }],
    ["reply to no request", { replyTo: 77 }],
    ["request to mu", { request: true }],
  ];
  it.each(kinds)("%s", async (_what, behaviour) => {
    const argv = fx.plugin("bad", { onCall: { "link.exec": behaviour } });
    const { proc } = await sup.ready({ name: "bad", argv });
    const err = await call("bad", argv).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(NoAnswer);
    expect((err as NoAnswer).written).toBe(true);
    await proc.stop("normal", "test");
    expect(proc.conn.brokenWhy).toBeTruthy();
    expect(ports.liveness.groupEmpty(proc.pgid)).toBe(true);
    // Refused for the rest of the invocation, without a new process.
    expect((await refusal(call("bad", argv))).code).toBe("plugin.broken");
    // The plugin still saw the whole stop sequence.
    const seen = fx.logOf("bad").map((m) => m.method);
    expect(seen).toContain("shutdown");
  });
});

describe("the stop sequence", () => {
  it("kills a plugin that ignores EOF after the grace, leaving nothing", async () => {
    const argv = fx.plugin("stuck", { ignoreEof: true });
    const { proc } = await sup.ready({ name: "stuck", argv });
    const record = await proc.stop("normal", "test");
    expect(record.forced).toBe(true);
    expect(ports.liveness.groupEmpty(proc.pgid)).toBe(true);
    expect(fx.logOf("stuck").map((m) => m.method ?? (m.eof ? "EOF" : "?"))).toEqual([
      "initialize",
      "shutdown",
      "EOF",
    ]);
  });

  // Spec, Process: every stop is the one sequence, whatever begins it.
  it("is the whole sequence when the plugin closes its stdout first: $/cancel, shutdown", async () => {
    const argv = fx.plugin("mute", { closeStdoutOn: "link.exec" });
    const { proc } = await sup.ready({ name: "mute", argv });
    const err = await call("mute", argv, "link.exec", 30_000).catch((e: unknown) => e);
    expect((err as NoAnswer).reason).toBe("exited");
    const record = await proc.stop("normal", "test");
    expect(record.cause).toBe("exited");
    expect(ports.liveness.groupEmpty(proc.pgid)).toBe(true);
    const seen = fx.logOf("mute");
    const exec = seen.find((m) => m.method === "link.exec") as { id: number };
    // The fixture exits on shutdown, so it may or may not live to see EOF.
    expect(seen.map((m) => m.method).slice(0, 4)).toEqual([
      "initialize",
      "link.exec",
      "$/cancel",
      "shutdown",
    ]);
    expect(seen[2]?.params).toEqual({ id: exec.id });
  });

  // A pass over /proc costs about 10 ms of every verb's stop; a
  // leader that has not exited yet already says the group is not empty.
  it("looks over the group only once its leader has exited", async () => {
    let earlyLooks = 0;
    const counting = new Supervisor(
      {
        ...ports,
        liveness: {
          ...ports.liveness,
          groupEmpty: (pgid) => {
            // The leader is the group's first pid; a zombie has no start time.
            if (ports.liveness.startOf(pgid) !== null) earlyLooks++;
            return ports.liveness.groupEmpty(pgid);
          },
        },
      },
      protocolChecks(),
    );
    const argv = fx.plugin("plain", {});
    const { proc } = await counting.ready({ name: "plain", argv });
    const record = await proc.stop("normal", "test");
    await counting.close();
    expect(record.forced).toBe(false);
    expect(earlyLooks).toBe(0);
    expect(ports.liveness.groupEmpty(proc.pgid)).toBe(true);
  });

  // A poll timer left running would hold mu's exit up to 20 ms.
  it("leaves no timer of its own running once the stop sequence is over", async () => {
    const running = new Set<object>();
    const clock: typeof ports.clock = {
      now: () => ports.clock.now(),
      sleep: (ms) => {
        const t = {};
        running.add(t);
        return ports.clock.sleep(ms).finally(() => running.delete(t));
      },
      setTimer: (ms, fn) => {
        const t = {};
        running.add(t);
        const timer = ports.clock.setTimer(ms, () => {
          running.delete(t);
          fn();
        });
        return {
          cancel: () => {
            running.delete(t);
            timer.cancel();
          },
        };
      },
    };
    const s = new Supervisor({ ...ports, clock }, protocolChecks());
    const { proc } = await s.ready({ name: "plain", argv: fx.plugin("plain", {}) });
    await proc.stop("normal", "test");
    await s.close();
    expect(running.size).toBe(0);
  });

  // Loading the validators is not added to the wait for the answer.
  it("loads the handshake's and the needed seams' checks while the plugin starts", async () => {
    const order: string[] = [];
    const real = protocolChecks();
    const s = new Supervisor(ports, {
      ...real,
      prepare(needs) {
        order.push(`prepare ${needs.join(",")}`);
        real.prepare?.(needs);
      },
      initializeErrors(result) {
        order.push("answer");
        return real.initializeErrors(result);
      },
    });
    await s.ready({ name: "plain", argv: fx.plugin("plain", {}) }, ["link"]);
    await s.close();
    // The needed seams' result validators load then too, not after the call.
    expect(order).toEqual(["prepare link", "answer"]);
  });

  it("kills a grandchild in the group that ignores SIGTERM", async () => {
    const argv = fx.plugin("gc", { spawnChild: "ignores-term" });
    const { proc } = await sup.ready({ name: "gc", argv });
    const childPid = fx.logOf("gc").find((m) => m.childPid)?.childPid as number;
    expect(alive(childPid)).toBe(true);
    await proc.stop("normal", "test");
    expect(ports.liveness.groupEmpty(proc.pgid)).toBe(true);
    expect(alive(childPid)).toBe(false);
  });

  it("kills what a leader left behind as soon as the leader exits", async () => {
    const argv = fx.plugin("leaver", { spawnChild: "plain", exitAfterHello: true });
    const { proc } = await sup.ready({ name: "leaver", argv });
    const childPid = fx.logOf("leaver").find((m) => m.childPid)?.childPid as number;
    await proc.child.exited;
    const record = await proc.stop("normal", "test");
    expect(record.cause).toBe("exited");
    expect(record.forced).toBe(false);
    expect(alive(childPid)).toBe(false);
  });

  it("passes mu's environment minus its local-only variables", async () => {
    const argv = fx.plugin("env", { spawnChild: "plain" });
    const { proc } = await sup.ready({ name: "env", argv });
    const env = (await import("node:fs"))
      .readFileSync(`/proc/${proc.pgid}/environ`, "utf8")
      .split("\0");
    expect(env).toContain("KEEP=yes");
    expect(env.some((e) => e.startsWith("MU_DB_PATH=") || e.startsWith("MU_STATE_DIR="))).toBe(
      false,
    );
    const kids = await pidtree(proc.pgid);
    expect(kids.length).toBeGreaterThan(0);
  });

  it("starts the plugin in the directory mu was run in, as its ports give it", async () => {
    const argv = fx.plugin("here", { spawnChild: "plain" });
    // Not this process's own directory: the port is what counts (docs/decisions.md).
    const there = new Supervisor({ ...ports, cwd: fx.dir }, protocolChecks());
    try {
      const { proc } = await there.ready({ name: "here", argv });
      expect(readlinkSync(`/proc/${proc.pgid}/cwd`)).toBe(fx.dir);
      expect(fx.dir).not.toBe(process.cwd());
    } finally {
      await there.close();
    }
  });

  it("keeps only stderr's first line, cut to 400 characters", async () => {
    const argv = fx.plugin("loud", { stderr: `${"e".repeat(500)}\nsecond` });
    const { proc } = await sup.ready({ name: "loud", argv });
    await proc.stop("normal", "test");
    expect(proc.stderrLine).toBe("e".repeat(400));
  });
});

describe("a crash of mu", () => {
  it("kills the plugin's group at once, even one that ignores EOF", async () => {
    const argv = fx.plugin("stuck", { ignoreEof: true, spawnChild: "ignores-term" });
    const driver = spawn(
      process.execPath,
      [join(packageRoot(), "test/fixtures/crash-driver.mjs"), ...argv],
      {
        env: { PATH: process.env.PATH },
        stdio: ["ignore", "pipe", "ignore"],
      },
    );
    let out = "";
    driver.stdout.on("data", (c: Buffer) => {
      out += c;
    });
    const code = await new Promise((r) => driver.on("exit", r));
    expect(code).toBe(1);
    const pgid = Number(out.trim());
    expect(pgid).toBeGreaterThan(0);
    // Without the kill on exit this plugin would live forever; allow only for
    // the kernel to finish delivering SIGKILL.
    for (let i = 0; i < 100 && !ports.liveness.groupEmpty(pgid); i++)
      await new Promise((r) => setTimeout(r, 20));
    expect(ports.liveness.groupEmpty(pgid)).toBe(true);
  });
});

describe("once mu is terminating", () => {
  it("starts no plugin and sends no request, then dies by the signal", async () => {
    const a = fx.plugin("a", { ignoreEof: true });
    const b = fx.plugin("b", {});
    const driver = spawn(
      process.execPath,
      [join(packageRoot(), "test/fixtures/terminate-driver.mjs"), ...a, "--", ...b],
      {
        env: { PATH: process.env.PATH },
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let out = "";
    driver.stdout.on("data", (c: Buffer) => {
      out += c;
    });
    const [code, signal] = await new Promise<[number | null, string | null]>((r) =>
      driver.on("exit", (c, s) => r([c, s])),
    );
    expect([code, signal]).toEqual([null, "SIGTERM"]);
    expect(out).toMatch(/^start: UnavailableError: not starting 'b': mu is terminating$/m);
    expect(out).toMatch(/^call: NoAnswer: link\.exec not sent: /m);
    expect(fx.logOf("b")).toEqual([]);
    expect(fx.logOf("a").filter((m) => m.method === "link.exec")).toEqual([]);
  });
});

describe("deadlines and cancel", () => {
  it("a reply that crosses the deadline is ignored: $/cancel, then the stop sequence", async () => {
    const argv = fx.plugin("slow", {
      onCall: {
        "link.exec": {
          delayMs: 1500,
          result: { exitCode: 0, stdout: "", stderr: "", partial: false },
        },
      },
    });
    const { proc } = await sup.ready({ name: "slow", argv });
    const err = await call("slow", argv, "link.exec", 200).catch((e: unknown) => e);
    expect((err as NoAnswer).reason).toBe("deadline");
    const record = await proc.stop("normal", "test");
    expect(record.cause).toBe("deadline");
    expect(proc.conn.brokenWhy).toBeUndefined();
    const seen = fx.logOf("slow");
    const exec = seen.find((m) => m.method === "link.exec") as {
      id: number;
      params: { deadline: number };
    };
    expect(typeof exec.params.deadline).toBe("number");
    // The fixture exits on shutdown, so it may or may not live to see EOF.
    expect(seen.map((m) => m.method ?? "EOF").slice(0, 4)).toEqual([
      "initialize",
      "link.exec",
      "$/cancel",
      "shutdown",
    ]);
    expect(seen[2]?.params).toEqual({ id: exec.id });
    // The next call starts the plugin again.
    await expect(sup.ready({ name: "slow", argv })).resolves.not.toBe(proc);
  });

  it("a call cancelled before it is written is never sent and does not stop the plugin", async () => {
    const argv = fx.plugin("c", { onCall: { "link.exec": { result: EXEC_OK } } });
    const { proc } = await sup.ready({ name: "c", argv });
    const ac = new AbortController();
    ac.abort();
    const err = await call("c", argv, "link.exec", 5000, ac.signal).catch((e: unknown) => e);
    expect((err as NoAnswer).reason).toBe("not-sent");
    expect(proc.state).toBe("running");
    expect(fx.logOf("c").map((m) => m.method)).toEqual(["initialize"]);
    await expect(call("c", argv)).resolves.toEqual(EXEC_OK);
  });

  it("an abort after the write cancels the call and stops the plugin", async () => {
    const argv = fx.plugin("a", { onCall: { "link.exec": { noReply: true } } });
    const { proc } = await sup.ready({ name: "a", argv });
    const ac = new AbortController();
    const pending = call("a", argv, "link.exec", 30_000, ac.signal).catch((e: unknown) => e);
    setTimeout(() => ac.abort(), 100);
    expect(((await pending) as NoAnswer).reason).toBe("aborted");
    expect((await proc.stop("normal", "t")).cause).toBe("aborted");
  });

  // A cleanup after such a stop (a failed spawn's job.stop) must reach a plugin.
  it("afterStop waits out a stop under way, and the next call goes to a fresh process", async () => {
    const argv = fx.plugin("a", { onCall: { "link.exec": { noReply: true } } });
    const { proc } = await sup.ready({ name: "a", argv });
    const ac = new AbortController();
    const pending = call("a", argv, "link.exec", 30_000, ac.signal).catch((e: unknown) => e);
    await waitFor(() => fx.logOf("a").some((m) => m.method === "link.exec"));
    ac.abort();
    await pending;
    expect(proc.state).not.toBe("running");
    // Without the wait the call is refused unsent by the stopping process.
    const refused = await call("a", argv).catch((e: unknown) => e);
    expect((refused as NoAnswer).message).toMatch(/the plugin is stopping/);
    await sup.afterStop("a");
    expect(proc.state).toBe("stopped");
    const { proc: fresh } = await sup.ready({ name: "a", argv });
    expect(fresh).not.toBe(proc);
    expect(fresh.state).toBe("running");
    // A running plugin, or one never started, is left as it is.
    await sup.afterStop("a");
    await sup.afterStop("never-started");
    expect(fresh.state).toBe("running");
  });
});

// Spec, Errors and Timeouts: a written call with no answer is unknown (a read)
// or an unknown outcome (an effect); one never written is a definite refusal.
// The stop is still the one sequence.
describe("a plugin that closes its stdin (EPIPE on mu's write)", () => {
  const exec = {
    method: "link.exec",
    params: { target: { host: { name: "h" } }, script: "true", cwd: ".", timeoutMs: 1000 },
    // Long: without the EPIPE seen, the call would wait this out.
    timeoutMs: 120_000,
  };

  it.each([
    [false, 5, "call.no-answer"],
    [true, 1, "call.no-answer"],
  ])(
    "effect %s: unanswered, exit %s, and the stop sequence still runs",
    async (effect, exit, code) => {
      const argv = fx.script("deaf", "closes-stdin.sh");
      const reg = { name: "deaf", argv };
      const { proc } = await sup.ready(reg);
      await waitFor(() => fx.logOf("deaf").some((m) => m.closedStdin));
      const err = (await callPlugin(sup, ports.clock, reg, { ...exec, effect }).catch(
        (e: unknown) => e,
      )) as MuError;
      expect([err.code, err.exit]).toEqual([code, exit]);
      expect(err.line()).toMatch(/^mu: plugin: 'deaf' link\.exec got no answer \(exited\)/);
      if (!effect)
        expect(err.line()).toContain(
          "the plugin was stopped: its stdin is closed (EPIPE on write)",
        );
      expect(err.line()).not.toContain("\n");
      // While the stop runs, a new call is refused before it is written: a
      // definite refusal even for an effect.
      const next = (await callPlugin(sup, ports.clock, reg, { ...exec, effect }).catch(
        (e: unknown) => e,
      )) as MuError;
      expect([next.code, next.exit]).toEqual(["call.not-sent", 5]);
      // The plugin never reads stdin again, so only the kill after the grace ends it.
      const record = await proc.stop("normal", "test");
      expect(record.forced).toBe(true);
      expect(ports.liveness.groupEmpty(proc.pgid)).toBe(true);
      expect(fx.logOf("deaf").map((m) => m.method ?? "closed")).toEqual(["initialize", "closed"]);
    },
  );
});

describe("error kinds", () => {
  const exec = {
    method: "link.exec",
    params: { target: { host: { name: "h" } }, script: "true", cwd: ".", timeoutMs: 1000 },
    timeoutMs: 5000,
  };

  it("retries retryable three times with identical params, then exit 5", async () => {
    const argv = fx.plugin("r", {
      onCall: { "link.exec": { error: { kind: "retryable", message: "busy" } } },
    });
    const err = await callPlugin(
      sup,
      ports.clock,
      { name: "r", argv },
      { ...exec, effect: false },
    ).catch((e: unknown) => e);
    expect((err as MuError).exit).toBe(5);
    const sent = fx.logOf("r").filter((m) => m.method === "link.exec") as {
      id: number;
      params: Record<string, unknown>;
    }[];
    expect(sent).toHaveLength(4);
    const strip = (p: Record<string, unknown>) => ({ ...p, deadline: 0 });
    expect(new Set(sent.map((m) => JSON.stringify(strip(m.params)))).size).toBe(1);
    expect(new Set(sent.map((m) => m.id)).size).toBe(4);
  });

  it("never retries permanent or human; human shows its remedy", async () => {
    const argv = fx.plugin("h", {
      onCall: {
        "link.exec": { error: { kind: "human", message: "log in", remedy: "run: box login" } },
      },
    });
    const err = (await callPlugin(
      sup,
      ports.clock,
      { name: "h", argv },
      { ...exec, effect: false },
    ).catch((e: unknown) => e)) as MuError;
    expect(err.exit).toBe(5);
    expect(err.line()).toBe("mu: plugin: 'h' link.exec needs a person: log in; run: box login");
    expect(fx.logOf("h").filter((m) => m.method === "link.exec")).toHaveLength(1);
  });

  it("unknown-outcome is exit 1 for an effect", async () => {
    const argv = fx.plugin("u", {
      onCall: { "host.release": { error: { kind: "unknown-outcome", message: "lost" } } },
    });
    const err = (await callPlugin(
      sup,
      ports.clock,
      { name: "u", argv },
      {
        method: "host.release",
        params: { target: { host: { name: "h" } }, key: "k" },
        timeoutMs: 5000,
        effect: true,
      },
    ).catch((e: unknown) => e)) as MuError;
    expect(err.exit).toBe(1);
  });
});

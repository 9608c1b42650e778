import { spawn } from "node:child_process";
import { chmodSync, copyFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { realPorts } from "../host/ports/real.js";
import { muBin, muProcess, tempState } from "./helpers.js";
import { channelSeam, type FixtureDir, fixtureDir, hello, LINK } from "./plugin-fixtures.js";

let fx: FixtureDir;
let state: ReturnType<typeof tempState>;
beforeEach(() => {
  fx = fixtureDir();
  state = tempState();
});
afterEach(() => {
  fx.done();
  state.done();
});

const mu = (...args: string[]) => muProcess(args, state.env);

describe("mu plugin add / list / rm (real processes)", () => {
  it("registers a plugin written in Python", () => {
    const exe = join(fx.dir, "mu-plugin-py");
    copyFileSync(join(packageRoot(), "test/fixtures/mu-plugin-py.py"), exe);
    chmodSync(exe, 0o755);
    const r = mu(
      "plugin",
      "add",
      "py",
      "--",
      exe,
      "--schema",
      join(packageRoot(), "schemas/plugin-protocol-v1.json"),
    );
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^registered py 1\.0\.0 \(instance py-local; seams: link\)/);
    const list = JSON.parse(mu("plugin", "list", "--json").stdout);
    expect(list).toEqual([
      {
        name: "py",
        argv: [exe, "--schema", expect.any(String)],
        instance: "py-local",
        seams: ["link"],
      },
    ]);
  });

  it("prints one line naming the rule and exits 4 for a bad registration", () => {
    const argv = fx.plugin("p", { hello: { ...hello("p"), schema: `sha256:${"1".repeat(64)}` } });
    const r = mu("plugin", "add", "p", "--", ...argv);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^mu: plugin: 'p' refused \(schema\.digest\): [^\n]+\n$/);
    expect(JSON.parse(mu("plugin", "list", "--json").stdout)).toEqual([]);
  });

  it.each([
    [
      "trust.absolute",
      () => ["relative/mu-plugin-p"],
      /path 'relative\/mu-plugin-p' is not absolute/,
    ],
    ["trust.basename", () => fx.plugin("p", {}, "p-plugin"), /must be named 'mu-plugin-p'/],
    [
      "load.name.mismatch",
      () => fx.plugin("p", { hello: hello("q") }),
      /refused \(name\.mismatch\)/,
    ],
    ["load.seams.none", () => fx.plugin("p", { hello: hello("p", {}) }), /refused \(seams\.none\)/],
  ])("%s: one line, exit 4, nothing recorded", (_rule, argv, pattern) => {
    const r = mu("plugin", "add", "p", "--", ...argv());
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(pattern);
    expect(r.stderr.split("\n")).toHaveLength(2);
    expect(JSON.parse(mu("plugin", "list", "--json").stdout)).toEqual([]);
  });

  it("re-add with the same argv records the new declaration; another argv is refused", () => {
    const argv = fx.plugin("p", {});
    expect(mu("plugin", "add", "p", "--", ...argv).code).toBe(0);
    expect(mu("plugin", "add", "p", "--", ...argv).stdout).toMatch(/^re-registered p/);
    const other = mu("plugin", "add", "p", "--", ...argv, "--extra");
    expect(other.code).toBe(4);
    expect(other.stderr).toMatch(
      /^mu: plugin: 'p' is registered with another argv: .*; remove it first: mu plugin rm p\n$/,
    );
  });

  it("refuses a channel name another plugin holds", () => {
    const channel = channelSeam("chat");
    const a = fx.plugin("a", { hello: hello("a", { link: LINK, channel }) });
    const b = fx.plugin("b", { hello: hello("b", { link: LINK, channel }) });
    expect(mu("plugin", "add", "a", "--", ...a).code).toBe(0);
    const r = mu("plugin", "add", "b", "--", ...b);
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/channel 'chat', which plugin 'a' already holds/);
  });

  it("rm removes a plugin; an unknown one is exit 3", () => {
    const argv = fx.plugin("p", {});
    expect(mu("plugin", "add", "p", "--", ...argv).code).toBe(0);
    expect(mu("plugin", "rm", "p").code).toBe(0);
    expect(mu("plugin", "rm", "p").code).toBe(3);
  });

  it("on SIGTERM during a call: $/cancel and shutdown reach the plugin, and mu dies by the signal", async () => {
    const argv = fx.plugin("slow", { helloDelayMs: 60_000 });
    const child = spawn(process.execPath, [muBin, "plugin", "add", "slow", "--", ...argv], {
      env: { PATH: process.env.PATH, ...state.env },
      stdio: "ignore",
    });
    // Wait until the plugin has the handshake request in hand.
    for (let i = 0; i < 500 && !fx.logOf("slow").some((m) => m.method === "initialize"); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill("SIGTERM");
    const [code, signal] = await new Promise<[number | null, string | null]>((res) =>
      child.on("exit", (c, s) => res([c, s])),
    );
    expect([code, signal]).toEqual([null, "SIGTERM"]);
    const seen = fx.logOf("slow");
    // The fixture exits on shutdown, so whether it lives to see EOF is a race.
    expect(seen.map((m) => m.method).slice(0, 3)).toEqual(["initialize", "$/cancel", "shutdown"]);
    expect(seen[1]?.params).toEqual({ id: seen[0]?.id });
  });

  it("absorbs a second signal during the stop, and dies by the first once the group is empty", async () => {
    const argv = fx.plugin("deaf", {
      helloDelayMs: 60_000,
      ignoreEof: true,
      spawnChild: "ignores-term",
    });
    const child = spawn(process.execPath, [muBin, "plugin", "add", "deaf", "--", ...argv], {
      env: { PATH: process.env.PATH, ...state.env },
      stdio: "ignore",
    });
    for (let i = 0; i < 500 && !fx.logOf("deaf").some((m) => m.method === "initialize"); i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    const exited = new Promise<[number | null, string | null]>((res) =>
      child.on("exit", (c, s) => res([c, s])),
    );
    child.kill("SIGTERM");
    await new Promise((r) => setTimeout(r, 300));
    child.kill("SIGINT");
    expect(await exited).toEqual([null, "SIGTERM"]);
    // mu waited the grace out and killed the group, grandchild included.
    const childPid = fx.logOf("deaf").find((m) => m.childPid)?.childPid as number;
    const { realLiveness } = await import("../host/ports/real.js");
    expect(realLiveness.startOf(childPid)).toBeNull();
    expect(fx.logOf("deaf").map((m) => m.method ?? (m.eof ? "EOF" : "child"))).toEqual([
      "child",
      "initialize",
      "$/cancel",
      "shutdown",
      "EOF",
    ]);
  });
});

// The exit codes in docs/cli.md (1 means an unknown outcome) and the one-line rule; the
// plugin's stop sequence is kept.
describe("mu's own stdout closed by its reader (EPIPE)", () => {
  it("does not crash: the verb finishes, the plugin gets its stop sequence, exit 5 in one line", async () => {
    const argv = fx.plugin("p", {
      onCall: {
        "link.exec": { result: { exitCode: 0, stdout: "hello\n", stderr: "", partial: false } },
      },
    });
    expect(mu("plugin", "add", "p", "--", ...argv).code).toBe(0);
    expect(mu("host", "add", "box", "--plugin", "p", "--fetch", "true").code).toBe(0);
    const child = spawn(process.execPath, [muBin, "host", "exec", "box", "--", "true"], {
      env: { PATH: process.env.PATH ?? "", ...state.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    // The reader goes away before mu writes a byte.
    child.stdout.destroy();
    let stderr = "";
    child.stderr.on("data", (c: Buffer) => {
      stderr += c;
    });
    const code = await new Promise((r) => child.on("close", r));
    expect(stderr).toMatch(/^mu: output: stdout was closed before [^\n]*\(EPIPE\)[^\n]*\n$/);
    expect(code).toBe(5);
    // A crash would have killed the plugin's group at once, without a shutdown.
    const seen = fx.logOf("p").map((m) => m.method ?? "EOF");
    expect(seen.slice(seen.lastIndexOf("initialize"))).toEqual([
      "initialize",
      "link.exec",
      "shutdown",
    ]);
  });
});

// Spec, Process and Timeouts: mu tracks the group, and the deadline plus one
// grace bounds every call.
describe("a helper that escaped the plugin's group (setsid) and holds its pipes", () => {
  const helpers: number[] = [];
  afterEach(() => {
    for (const pid of helpers.splice(0)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  });

  it("does not keep mu alive once the plugin's stop is over", async () => {
    const exec = { result: { exitCode: 0, stdout: "hello\n", stderr: "", partial: false } };
    const argv = fx.plugin("p", { onCall: { "link.exec": exec } });
    expect(mu("plugin", "add", "p", "--", ...argv).code).toBe(0);
    expect(mu("host", "add", "box", "--plugin", "p", "--fetch", "true").code).toBe(0);
    // From here on every start of the plugin leaves a 30 s helper behind.
    fx.plugin("p", { onCall: { "link.exec": exec }, helperHoldsPipes: true });
    const child = spawn(process.execPath, [muBin, "host", "exec", "box", "--", "true"], {
      env: { PATH: process.env.PATH ?? "", ...state.env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    child.stdout.on("data", (c: Buffer) => {
      stdout += c;
    });
    const code = await new Promise((r) => child.on("exit", r));
    for (const m of fx.logOf("p")) if (typeof m.helperPid === "number") helpers.push(m.helperPid);
    expect(helpers).toHaveLength(1);
    // The order is the proof: mu was done while the helper still held the pipes.
    // (A zombie counts as gone: the sleep may have ended, unreaped.)
    expect(realPorts().liveness.startOf(helpers[0] as number)).not.toBeNull();
    expect([code, stdout]).toEqual([0, "hello\n"]);
  });
});

// Spec, Transport: one message per line, at most 1 MiB.
describe("a request too long for the 1 MiB line once encoded", () => {
  // Each control character becomes six bytes (\u0001) in JSON; two arguments
  // keep each under the kernel's limit for one argv string.
  const wide = "\u0001".repeat(100_000);

  it("a script within maxScriptBytes is refused with exit 2, never sent", () => {
    const link = { ...LINK, maxScriptBytes: 4 * 1024 * 1024 };
    const argv = fx.plugin("p", { hello: hello("p", { link }) });
    expect(mu("plugin", "add", "p", "--", ...argv).code).toBe(0);
    expect(mu("host", "add", "box", "--plugin", "p", "--fetch", "true").code).toBe(0);
    const r = mu("host", "exec", "box", "--", wide, wide);
    expect(r.stderr).toMatch(
      /^mu: usage: 'p' link\.exec was not sent: its request would be \d+ bytes once encoded, over the 1048576-byte line limit; [^\n]+\n$/,
    );
    expect(r.code).toBe(2);
    expect(fx.logOf("p").filter((m) => m.method === "link.exec")).toEqual([]);
  });

  it("an effect is refused with exit 2 and leaves no intent behind", () => {
    const seams = { link: LINK, host: { acquire: { lookup: true, fenceKey: true } } };
    const argv = fx.plugin("p", { hello: hello("p", seams) });
    expect(mu("plugin", "add", "p", "--", ...argv).code).toBe(0);
    const r = mu(
      "host",
      "acquire",
      "--provider",
      "p",
      "h1",
      "--param",
      `a=${wide}`,
      "--param",
      `b=${wide}`,
    );
    expect(r.stderr).toMatch(/^mu: usage: 'p' host\.acquire was not sent: [^\n]+\n$/);
    expect(r.code).toBe(2);
    expect(fx.logOf("p").filter((m) => m.method === "host.acquire")).toEqual([]);
    expect(mu("state", "--json").stdout.trim()).toBe("[]");
  });
});

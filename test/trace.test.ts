import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Command } from "commander";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildProgram } from "../host/cli/program.js";
import { packageRoot } from "../host/package-root.js";
import { optionKind, Redactor } from "../host/trace/redact.js";
import { World, type WorldConfig } from "../sim/plugin/world.js";
import { muProcess } from "./helpers.js";

// MU_TRACE_DIR: each mu invocation leaves one NDJSON trace of how it was
// called, every plugin line both ways and how it ended; free text is kept
// only as length and hash unless MU_TRACE_CONTENT=1, and the values of mu's
// secret-named variables never appear, content or not (spec: Secrets).

const sim = join(packageRoot(), "sim/bin/mu-plugin-sim");

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "mu-trace-"));
});
afterEach(async () => {
  await pluginsGone();
  rmSync(root, { recursive: true, force: true });
});

/**
 * A mu killed at a crash point leaves its plugin to notice the closed pipe
 * and finish its last call, writing into the world meanwhile; removing the
 * world under it races those writes. Wait (bounded) for every plugin process
 * the world's transcript names to be gone.
 */
async function pluginsGone(): Promise<void> {
  const pids = new Set<number>();
  try {
    for (const l of readFileSync(join(root, "world", "transcript.ndjson"), "utf8").split("\n"))
      if (l) pids.add((JSON.parse(l) as { pid: number }).pid);
  } catch {
    return;
  }
  const alive = (pid: number) => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  for (let i = 0; i < 300 && [...pids].some(alive); i++)
    await new Promise((r) => setTimeout(r, 100));
}

function setup(world: Partial<WorldConfig>) {
  World.create(join(root, "world"), { preset: "link-job", instance: "sim-1", ...world });
  const env = {
    MU_STATE_DIR: join(root, "state"),
    HOME: root,
    MU_TRACE_DIR: join(root, "traces"),
    MU_MUX: "sim",
  };
  return (args: string[], more: Record<string, string> = {}) =>
    muProcess(args, { ...env, ...more });
}

function traces(): string[] {
  const dir = join(root, "traces");
  return readdirSync(dir)
    .sort()
    .map((f) => readFileSync(join(dir, f), "utf8"));
}

function records(text: string): Record<string, unknown>[] {
  return text
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

describe("MU_TRACE_DIR", () => {
  it("records argv, each plugin line with its time, the plugin's exit and mu's exit", () => {
    const mu = setup({});
    expect(mu(["plugin", "add", "sim", "--", sim, "--world", join(root, "world")]).code).toBe(0);
    const [t] = traces();
    const recs = records(t ?? "");
    expect(recs[0]).toMatchObject({ ev: "mu" });
    expect((recs[0]?.argv as string[] | undefined)?.slice(0, 5)).toEqual([
      "plugin",
      "add",
      "sim",
      "--",
      sim,
    ]);
    const evs = recs.map((r) => r.ev);
    expect(evs).toEqual(
      expect.arrayContaining(["spawn", "out", "in", "stdin-closed", "exit", "end"]),
    );
    expect(recs.find((r) => r.ev === "in")).toMatchObject({ p: 1, msg: { id: 1 } });
    expect(recs.at(-1)).toMatchObject({ ev: "end", exit: 0 });
    const times = recs.map((r) => Number(r.t));
    expect(times).toEqual([...times].sort((a, b) => a - b));
  });

  it("records the crash point that ended mu, and no end", () => {
    const mu = setup({ preset: "link-job" });
    mu(["plugin", "add", "sim", "--", sim, "--world", join(root, "world")]);
    mu(["host", "add", "box", "--plugin", "sim"]);
    const r = mu(["agent", "spawn", "a", "--host", "box"], {
      MU_CRASH_AT: "effect.request-written",
    });
    expect(r.signal).toBe("SIGKILL");
    const recs = records(traces().at(-1) ?? "");
    expect(recs.at(-1)).toMatchObject({ ev: "crash", point: "effect.request-written" });
    expect(recs[0]).toMatchObject({ env: { MU_CRASH_AT: "effect.request-written" } });
  });

  it("keeps free text only as length and hash by default", () => {
    const mu = setup({});
    mu(["plugin", "add", "sim", "--", sim, "--world", join(root, "world")]);
    mu(["host", "add", "box", "--plugin", "sim"]);
    const r = mu(["host", "exec", "box", "--", "echo", "plain-words-here"]);
    expect(r.stdout).toContain("plain-words-here");
    const all = traces().join("");
    expect(all).not.toContain("plain-words-here");
    expect(all).toMatch(/"script":"\[len=21 sha=[0-9a-f]{12}\]"/);
  });

  it("a trace that cannot be written costs one line and changes nothing else", () => {
    const mu = setup({});
    const r = mu(["plugin", "list"], { MU_TRACE_DIR: "/proc/mu-trace-cannot-be-here" });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(
      /^mu: trace: cannot write a trace in \/proc\/mu-trace-cannot-be-here \(ENOENT\); running untraced: [^\n]+\n$/,
    );
  });

  it("never holds the canary, even with MU_TRACE_CONTENT=1", () => {
    const canary = `canary-${Math.random().toString(36).slice(2)}`;
    const mu = setup({
      preset: "provider-full",
      faults: [
        { on: "initialize", times: "always", do: { leakCanary: "stderr" } },
        { on: "link.exec", times: "always", do: { leakCanary: "reply" } },
      ],
    });
    const env = { MU_PLUGIN_CANARY: canary, MU_TRACE_CONTENT: "1" };
    expect(mu(["plugin", "add", "sim", "--", sim, "--world", join(root, "world")], env).code).toBe(
      0,
    );
    expect(
      mu(["host", "acquire", "h1", "--provider", "sim", "--param", `t=${canary}`], env).code,
    ).toBe(0);
    const r = mu(["host", "exec", "h1", "--", "echo", "visible", canary], env);
    // The plugin really leaked it, and mu really ran with it.
    expect(r.stdout).toContain(canary);
    const all = traces().join("");
    expect(all).toContain("visible");
    expect(all).toContain("[masked]");
    expect(all).not.toContain(canary);
  });

  it("masks a secret across the stderr line's 400-character cut before cutting", () => {
    const canary = `canary-${Math.random().toString(36).slice(2)}${Date.now()}`;
    // Ten characters of the canary before the cut, the rest after it.
    const line = `${"x".repeat(390)}${canary} and more after it`;
    const mu = setup({ faults: [{ on: "initialize", times: "always", do: { stderr: line } }] });
    const env = { MU_PLUGIN_CANARY: canary, MU_TRACE_CONTENT: "1" };
    expect(mu(["plugin", "add", "sim", "--", sim, "--world", join(root, "world")], env).code).toBe(
      0,
    );
    const kept = records(traces()[0] ?? "").find((r) => r.ev === "stderr")?.line as string;
    expect(kept).toBe(`${"x".repeat(390)}[masked] a`);
    // Not even its first four characters are left anywhere in the trace.
    expect(traces().join("")).not.toContain(canary.slice(0, 4));
  });
});

describe("mu plugin check's own canary", () => {
  it("is masked in the trace too: it is in the plugin's environment, not mu's", () => {
    const mu = setup({
      preset: "link-only",
      faults: [{ on: "link.exec", times: "always", do: { leakCanary: "reply" } }],
    });
    mu(["plugin", "add", "sim", "--", sim, "--world", join(root, "world")]);
    mu(["plugin", "check", "sim", "--seam", "link", "--repeat", "1"], { MU_TRACE_CONTENT: "1" });
    // The suite's canary is random; the world saw the plugin leak it.
    const leaked = /canary-[0-9a-f]+/.exec(
      readFileSync(join(root, "world", "transcript.ndjson"), "utf8"),
    )?.[0];
    expect(leaked).toBeDefined();
    const all = traces().join("");
    expect(all).toContain("[masked]");
    expect(all).not.toContain(leaked);
  });
});

describe("what a trace keeps of mu's argv and of a message", () => {
  const r = new Redactor({ GH_TOKEN: "ghp_s3cret", SHORT_KEY: "abc" }, false);
  const hashed = /^\[len=\d+ sha=[0-9a-f]{12}\]$/;

  it("hashes the words that carry text and keeps verbs, names, flags and paths", () => {
    const out = r.argv(["agent", "send", "-w", "ops", "a", "deploy now", "--force"]);
    expect(out.slice(0, 5)).toEqual(["agent", "send", "-w", "ops", "a"]);
    expect(out[5]).toMatch(hashed);
    expect(out[6]).toBe("--force");
    const exec = r.argv(["host", "exec", "box", "--", "cat", "/etc/passwd"]);
    expect(exec.slice(0, 4)).toEqual(["host", "exec", "box", "--"]);
    expect(exec.slice(4).every((w) => hashed.test(w))).toBe(true);
    const acq = r.argv(["host", "acquire", "h1", "--provider", "p", "--param", "pw=hunter2"]);
    expect(acq.slice(0, 6)).toEqual(["host", "acquire", "h1", "--provider", "p", "--param"]);
    expect(acq[6]).toMatch(/^pw=\[len=7 sha=/);
    expect(r.argv(["agent", "spawn", "a", "--host", "box", "--send=hi there"])[5]).toMatch(
      /^--send=\[len=8 /,
    );
    // A spawn's command is free text: it may carry a key or a prompt.
    const spawn = r.argv(["agent", "spawn", "a", "--host", "box", "--command", "claude -p hi"]);
    expect(spawn.slice(0, 6)).toEqual(["agent", "spawn", "a", "--host", "box", "--command"]);
    expect(spawn[6]).toMatch(hashed);
    expect(r.argv(["agent", "spawn", "a", "--command=claude -p hi"])[3]).toMatch(
      /^--command=\[len=12 /,
    );
    // A path stays, so the invocation can run again; the script itself is hashed on the wire.
    expect(r.argv(["host", "exec", "box", "--file", "/srv/deploy.sh", "--cwd", "/srv"])).toEqual([
      "host",
      "exec",
      "box",
      "--file",
      "/srv/deploy.sh",
      "--cwd",
      "/srv",
    ]);
  });

  it("knows how to keep the value of every option of mu that takes one", async () => {
    const silent = { ports: undefined as never, out: () => {}, err: () => {} };
    const { program } = await buildProgram(silent);
    const all = (c: Command): Command[] => [c, ...c.commands.flatMap(all)];
    const unknown = all(program).flatMap((c) =>
      c.options
        .filter((o) => o.required || o.optional)
        .flatMap((o) => [o.long, o.short])
        .filter((f): f is string => f !== undefined && optionKind(f) === undefined)
        .map((f) => `${c.name()} ${f}`),
    );
    expect(unknown).toEqual([]);
  });

  it("hashes free text in params, results and errors, and masks secrets everywhere", () => {
    const msg = r.message({
      jsonrpc: "2.0",
      id: 3,
      method: "job.start",
      params: {
        key: "job-1",
        spec: { cmd: "claude", env: { A: "x" } },
        params: { size: "small" },
        note: "token ghp_s3cret here",
      },
    }) as { params: Record<string, never> };
    const p = msg.params as {
      key: string;
      spec: { cmd: string; env: { A: string } };
      params: { size: string };
      note: string;
    };
    expect(p.key).toBe("job-1");
    // A spawn's --command is hashed in argv, so it is on the wire too.
    expect(p.spec.cmd).toMatch(hashed);
    expect(p.spec.env.A).toMatch(hashed);
    expect(p.params.size).toMatch(hashed);
    expect(p.note).toBe("token [masked] here");
    // Too short to be a secret worth masking.
    expect(r.mask("abc def")).toBe("abc def");
    const err = r.message({
      id: 3,
      error: { code: 1, message: "boom", data: { kind: "human", remedy: "call" } },
    });
    expect(JSON.stringify(err)).not.toMatch(/boom|call/);
  });
});

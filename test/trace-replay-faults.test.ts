import { spawn, spawnSync } from "node:child_process";
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { packageRoot } from "../host/package-root.js";
import { World, type WorldConfig } from "../sim/plugin/world.js";
import { runScenario } from "../sim/runner/execute.js";
import type { LoadedScenario } from "../sim/runner/scenario.js";
import { muBin, muProcess } from "./helpers.js";

// What a recorded plugin did that was not a reply comes back in the replay
// at the same point: an invalid line, an exit of its own, an error, an EOF
// it ignored, a mu killed mid-call. Each case records a short session
// against a faulty sim, converts it, and runs it with the world gone: mu must
// end each step the same way and print the same first word of trouble.

const sim = join(packageRoot(), "sim/bin/mu-plugin-sim");
let root: string;
afterEach(() => rmSync(root, { recursive: true, force: true }));

let scenario: LoadedScenario;

/** The sim under the name the trust rules want for a plugin called `name`. */
function launcher(name: string): string {
  if (name === "sim") return sim;
  const path = join(root, `mu-plugin-${name}`);
  writeFileSync(
    path,
    `#!/usr/bin/env node\nimport ${JSON.stringify(join(packageRoot(), "dist/sim/main.js"))};\n`,
  );
  chmodSync(path, 0o755);
  return path;
}

type Ran = { code: number | null; signal: string | null; stderr: string };

type Runner = (args: string[], env: Record<string, string>) => Ran | Promise<Ran>;

async function roundTrip(
  world: Partial<WorldConfig>,
  session: string[][],
  run: Runner = (args, env) => muProcess(args, env),
  name = "sim",
) {
  root = mkdtempSync(join(tmpdir(), "mu-replay-fault-"));
  World.create(join(root, "world"), { preset: "provider-full", instance: "sim-1", ...world });
  const env = {
    MU_STATE_DIR: join(root, "state"),
    HOME: root,
    MU_TRACE_DIR: join(root, "traces"),
  };
  const recorded: Ran[] = [
    muProcess(["plugin", "add", name, "--", launcher(name), "--world", join(root, "world")], env),
  ];
  for (const args of session) recorded.push(await run(args, env));
  const traces = readdirSync(join(root, "traces")).map((f) => join(root, "traces", f));
  const out = join(root, "s.yaml");
  const conv = spawnSync(
    process.execPath,
    [join(packageRoot(), "dist/sim/trace/from-trace-main.js"), ...traces, "--out", out],
    { encoding: "utf8" },
  );
  expect(conv.status, conv.stderr).toBe(0);
  rmSync(join(root, "world"), { recursive: true, force: true });
  const s = { ...(parse(readFileSync(out, "utf8")) as LoadedScenario), file: out };
  scenario = s;
  const result = await runScenario(s);
  const replayed = result.steps.filter((st) => st.step.startsWith("mu "));
  return { recorded, replayed, result };
}

/** The one line's area and what kind of trouble, not its variable details. */
const gist = (stderr: string) => (stderr.split("\n")[0] ?? "").split(/[:(]/).slice(0, 2).join(":");

describe("replay of what was not a reply", () => {
  it.each([
    ["an invalid line", { on: "link.exec", do: { invalid: "not-json" } }],
    ["an exit of its own", { on: "link.exec", do: { crash: "before" } }],
    ["an error reply", { on: "link.exec", do: { error: { kind: "permanent" } } }],
    ["an EOF it ignored", { on: "link.exec", do: { ignoreEof: true } }],
  ] as const)(
    "%s",
    async (_name, fault) => {
      const { recorded, replayed, result } = await roundTrip(
        { preset: "link-only", faults: [fault as never] },
        [
          ["host", "add", "box", "--plugin", "sim"],
          ["host", "exec", "box", "--", "true"],
        ],
      );
      expect(result.failure).toBeUndefined();
      expect(replayed.map((r) => r.signal ?? r.exit)).toEqual(
        recorded.map((r) => r.signal ?? r.code),
      );
      expect(gist(replayed.at(-1)?.stderr ?? "")).toBe(gist(recorded.at(-1)?.stderr ?? ""));
      // The replayed plugin itself, not just mu's outcome: an ignored EOF is ignored again.
      const notes = result.transcript as { dir: string; msg: { ignored?: boolean } }[];
      const ignored = notes.some((e) => e.dir === "note" && e.msg.ignored === true);
      expect(ignored).toBe("ignoreEof" in fault.do);
    },
    60_000,
  );

  it("a signal mu died by, sent again at the same call", async () => {
    // SIGTERM once the plugin has the script: mu stops it and dies by the signal.
    const termDuringExec: Runner = (args, env) => {
      if (args[1] !== "exec") return muProcess(args, env);
      const child = spawn(process.execPath, [muBin, ...args], {
        env: { PATH: process.env.PATH ?? "", ...env },
      });
      let stderr = "";
      child.stderr.on("data", (b: Buffer) => {
        stderr += b;
      });
      const world = new World(join(root, "world"));
      const poll = setInterval(() => {
        if (world.transcript().some((e) => e.dir === "in" && e.msg.method === "link.exec")) {
          clearInterval(poll);
          child.kill("SIGTERM");
        }
      }, 20);
      return new Promise((done) =>
        child.on("close", (code, signal) => {
          clearInterval(poll);
          done({ code, signal, stderr });
        }),
      );
    };
    const { recorded, replayed, result } = await roundTrip(
      { preset: "link-only", faults: [{ on: "link.exec", do: { hang: true } }] },
      [
        ["host", "add", "box", "--plugin", "sim"],
        ["host", "exec", "box", "--", "true"],
      ],
      termDuringExec,
    );
    expect(recorded.map((r) => r.signal ?? r.code)).toEqual([0, 0, "SIGTERM"]);
    expect(result.failure).toBeUndefined();
    expect(replayed.map((r) => r.signal ?? r.exit)).toEqual([0, 0, "SIGTERM"]);
  }, 60_000);

  it("a mu the plugin killed mid-call", async () => {
    const { recorded, replayed, result } = await roundTrip(
      { faults: [{ on: "host.acquire", do: { killMu: "after" } }] },
      [
        ["host", "acquire", "h1", "--provider", "sim"],
        ["host", "status", "h1"],
      ],
    );
    expect(recorded.map((r) => r.signal ?? r.code)).toEqual([0, "SIGKILL", 0]);
    expect(result.failure).toBeUndefined();
    expect(replayed.map((r) => r.signal ?? r.exit)).toEqual([0, "SIGKILL", 0]);
    expect(replayed[2]?.stderr).toMatch(/acquire[.]lookup[.]found/);
  }, 60_000);

  it("a plugin of another name, replayed under a launcher of that name", async () => {
    const { recorded, replayed, result } = await roundTrip(
      { preset: "link-only", hello: { plugin: { name: "foo" } } },
      [
        ["host", "add", "box", "--plugin", "foo"],
        ["host", "exec", "box", "--", "true"],
      ],
      undefined,
      "foo",
    );
    expect(scenario.steps[0]).toEqual({ install: { as: "mu-plugin-foo" } });
    expect(result.failure).toBeUndefined();
    expect(replayed.map((r) => r.exit)).toEqual(recorded.map((r) => r.code));
    expect(
      recorded.map((r) => r.code),
      recorded.map((r) => r.stderr).join(""),
    ).toEqual([0, 0, 0]);
  }, 60_000);
});

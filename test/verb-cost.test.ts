import { spawnSync } from "node:child_process";
import { chmodSync, copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { runCli } from "../host/cli/run.js";
import { packageRoot } from "../host/package-root.js";
import { realPorts } from "../host/ports/real.js";
import type { Ports } from "../host/ports/types.js";
import { dbPath } from "../host/store/index.js";
import { mu, muBin, tempState } from "./helpers.js";

// Per-verb cost: the work a short verb does, counted rather than
// timed, so a busy machine can never fail these.

let st: ReturnType<typeof tempState>;
beforeEach(async () => {
  st = tempState();
  // The stand-alone link plugin keeps its own slots (slots: "self").
  const exe = join(st.dir, "mu-plugin-lk");
  copyFileSync(join(packageRoot(), "test/fixtures/link-plugin.mjs"), exe);
  chmodSync(exe, 0o755);
  const home = join(st.dir, "home");
  mkdirSync(home);
  const schema = join(packageRoot(), "schemas/plugin-protocol-v1.json");
  const argv = [exe, "--schema", schema, "--home", home, "--hosts", "box"];
  expect((await mu(["plugin", "add", "lk", "--", ...argv], st.env)).stderr).toBe("");
  expect((await mu(["host", "add", "box", "--plugin", "lk"], st.env)).stderr).toBe("");
});
afterEach(() => st.done());

/** Runs mu in this process, counting the reads of its database file. */
async function counted(args: string[]) {
  const ports = realPorts({ PATH: process.env.PATH, ...st.env });
  const db = dbPath(ports.env);
  let reads = 0;
  const fs: Ports["fs"] = Object.create(ports.fs);
  fs.readFile = (path) => {
    if (path === db) reads++;
    return ports.fs.readFile(path);
  };
  let stdout = "";
  let stderr = "";
  const code = await runCli(args, {
    ports: { ...ports, fs },
    out: (s) => {
      stdout += s;
    },
    err: (s) => {
      stderr += s;
    },
  });
  return { code, stdout, stderr, reads };
}

describe("mu host exec", () => {
  it("reads the database once when the link keeps its own slots", async () => {
    const r = await counted(["host", "exec", "box", "--", "echo hi"]);
    expect(r.stderr).toBe("");
    expect([r.code, r.stdout]).toEqual([0, "hi\n"]);
    expect(r.reads).toBe(1);
  });
});

describe("the built bin", () => {
  // Node's own debug log names each ES module it loads.
  const modulesOf = (args: string[]) => {
    const r = spawnSync(process.execPath, [muBin, ...args], {
      env: { PATH: process.env.PATH ?? "", ...st.env, NODE_DEBUG: "esm" },
      encoding: "utf8",
    });
    expect(r.status, r.stderr).toBe(0);
    const urls = r.stderr.match(/Storing (file:\/\/\S+)/g) ?? [];
    return [...new Set(urls.map((u) => u.replace(/^Storing file:\/\/.*?\/dist\//, "dist/")))];
  };

  it("loads neither crypto nor child_process for a verb that only reads the database, nor crypto for a plugin call", () => {
    const builtins = (args: string[]) => {
      const report =
        'process.on("exit",()=>process.stderr.write(process.moduleLoadList.join(",")))';
      const r = spawnSync(
        process.execPath,
        ["--import", `data:text/javascript,${report}`, muBin, ...args],
        { env: { PATH: process.env.PATH ?? "", ...st.env }, encoding: "utf8" },
      );
      expect(r.status, r.stderr).toBe(0);
      return r.stderr.split(",").filter((m) => /^NativeModule (crypto|child_process)$/.test(m));
    };
    expect(builtins(["plugin", "list"])).toEqual([]);
    // Loaded on first use, by the verbs that spawn. Calling a plugin hashes
    // nothing: the schema's digest comes from the build's validator index.
    expect(builtins(["host", "exec", "box", "--", "true"])).toEqual(["NativeModule child_process"]);
  });

  // The bundle is CommonJS compiled by vm.Script (for its code cache), and
  // the bin requires its CommonJS loader: no verb sets up the ES module
  // loader. NODE_DEBUG=esm names every ES module Node loads, so a verb that
  // fell back to main.js and tsc's files would list them here.
  it("runs a verb from the one-file bundle without loading a single ES module", () => {
    expect(modulesOf(["plugin", "list"])).toEqual([]);
    expect(modulesOf(["host", "exec", "box", "--", "true"])).toEqual([]);
  });

  // The bin is CommonJS so that --version never sets up the ES module loader.
  it("answers --version without loading a single ES module", () => {
    expect(modulesOf(["--version"])).toEqual([]);
  });
});

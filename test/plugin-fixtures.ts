import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { packageRoot } from "../host/package-root.js";
import { schemaDigest } from "../host/protocol/schema.js";

export const LINK = {
  fetch: false,
  slots: "self",
  remoteOnTimeout: "unknown",
  quiescence: "provable",
  maxScriptBytes: 131072,
  checks: ["reach"],
};

/** A channel seam with the least each capability can be, named as asked. */
export function channelSeam(name: string) {
  return {
    name,
    caps: {
      fence: "none",
      receipt: "exact",
      dedupe: "none",
      steer: "none",
      interrupt: "none",
      fresh: "none",
      answer: false,
      command: false,
      watch: "stream",
      settleText: "full",
    },
  };
}

export function hello(name: string, seams: Record<string, unknown> = { link: LINK }) {
  return {
    protocol: 1,
    plugin: { name, version: "0.1.0" },
    instance: "test",
    schema: schemaDigest(),
    seams,
  };
}

export interface FixtureDir {
  dir: string;
  /** Installs the fixture plugin as mu-plugin-<name> with this config; returns its argv. */
  plugin(name: string, cfg: Record<string, unknown>, file?: string): string[];
  /** Installs test/fixtures/<file> as mu-plugin-<name>, given its hello file and log as argv. */
  script(name: string, file: string): string[];
  logOf(name: string): Record<string, unknown>[];
  done(): void;
}

export function fixtureDir(): FixtureDir {
  // The run id lets the suite's teardown find this run's leftovers only.
  const dir = mkdtempSync(join(tmpdir(), `mu-plugins-${process.env.MU_TEST_RUN ?? "x"}-`));
  const logs = new Map<string, string>();
  return {
    dir,
    plugin(name, cfg, file = `mu-plugin-${name}`) {
      const exe = join(dir, file);
      copyFileSync(join(packageRoot(), "test/fixtures/plugin.mjs"), exe);
      chmodSync(exe, 0o755);
      const log = join(dir, `${name}.log`);
      logs.set(name, log);
      const cfgFile = join(dir, `${name}.json`);
      writeFileSync(cfgFile, JSON.stringify({ hello: hello(name), log, ...cfg }));
      return [exe, "--config", cfgFile];
    },
    script(name, file) {
      const exe = join(dir, `mu-plugin-${name}`);
      copyFileSync(join(packageRoot(), "test/fixtures", file), exe);
      chmodSync(exe, 0o755);
      const log = join(dir, `${name}.log`);
      logs.set(name, log);
      const helloFile = join(dir, `${name}.hello.json`);
      writeFileSync(helloFile, JSON.stringify(hello(name)));
      return [exe, helloFile, log];
    },
    logOf(name) {
      const log = logs.get(name);
      if (!log) return [];
      try {
        return readLines(log);
      } catch {
        return [];
      }
    },
    done: () => rmSync(dir, { recursive: true, force: true }),
  };
}

function readLines(path: string): Record<string, unknown>[] {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

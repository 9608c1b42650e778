import { spawn } from "node:child_process";
import { chmodSync, copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { packageRoot } from "../../host/package-root.js";
import { Supervisor } from "../../host/plugin/supervisor.js";
import { realPorts } from "../../host/ports/real.js";
import { protocolChecks } from "../../host/protocol/checks.js";
import { schemaDigest } from "../../host/protocol/schema.js";
import { cleanEnv } from "./measure.js";

const here = join(packageRoot(), "test/bench");

const LINK = {
  fetch: false,
  slots: "self",
  remoteOnTimeout: "unknown",
  quiescence: "provable",
  maxScriptBytes: 131072,
  checks: [],
};

/** Installs the echo plugin as mu-plugin-bench in dir; returns its argv. */
export function benchPlugin(dir: string): string[] {
  const exe = join(dir, "mu-plugin-bench");
  copyFileSync(join(here, "echo-plugin.mjs"), exe);
  chmodSync(exe, 0o755);
  const hello = join(dir, "hello.json");
  const result = {
    protocol: 1,
    plugin: { name: "bench", version: "0" },
    instance: "bench",
    schema: schemaDigest(),
    seams: { link: LINK },
  };
  writeFileSync(hello, JSON.stringify(result));
  return [exe, hello];
}

const params = { target: { host: { name: "h" } }, script: "true", cwd: ".", timeoutMs: 20_000 };

/** Sequential round trips of the same JSON-RPC line through a raw echo child. */
export async function rawEcho(n: number): Promise<number> {
  const child = spawn(process.execPath, [join(here, "raw-echo.mjs")], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const line = `${JSON.stringify({ jsonrpc: "2.0", id: 1, method: "link.exec", params: { ...params, deadline: Date.now() } })}\n`;
  let buf = "";
  let waiting: (() => void) | undefined;
  child.stdout.on("data", (c: Buffer) => {
    buf += c;
    if (buf.endsWith("\n")) {
      buf = "";
      waiting?.();
    }
  });
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) {
    await new Promise<void>((r) => {
      waiting = r;
      child.stdin.write(line);
    });
  }
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  child.stdin.end();
  await new Promise((r) => child.on("exit", r));
  return ms / n;
}

/** Sequential link.exec calls through mu's supervisor and connection. */
export async function muCalls(argv: string[], n: number): Promise<number> {
  const sup = new Supervisor(realPorts(), protocolChecks());
  const reg = { name: "bench", argv };
  await sup.ready(reg);
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) await sup.call(reg, "link.exec", params, { timeoutMs: 25_000 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  await sup.close();
  return ms / n;
}

/** Spawn, handshake and the whole stop sequence, for a plugin that exits on EOF. */
export async function handshakeToStopped(argv: string[], n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const sup = new Supervisor(realPorts(cleanEnv()), protocolChecks());
    const t0 = process.hrtime.bigint();
    await sup.ready({ name: "bench", argv });
    await sup.close();
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return out.sort((a, b) => a - b);
}

/** The baseline for the above: spawn the same runtime and wait for it to exit. */
export async function spawnToExit(n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t0 = process.hrtime.bigint();
    await new Promise((r) =>
      spawn(process.execPath, ["-e", "0"], { stdio: "ignore", env: cleanEnv() }).on("exit", r),
    );
    out.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  return out.sort((a, b) => a - b);
}

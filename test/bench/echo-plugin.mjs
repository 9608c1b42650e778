#!/usr/bin/env node
// The bench's plugin: answers the handshake from its config, every call with
// one fixed link.exec result, and exits on shutdown or EOF.
import { readFileSync } from "node:fs";
import { createInterface } from "node:readline";

const hello = JSON.parse(readFileSync(process.argv[2], "utf8"));
const result = { exitCode: 0, stdout: "ok", stderr: "", partial: false };
const rl = createInterface({ input: process.stdin });
rl.on("line", (line) => {
  const m = JSON.parse(line);
  if (m.method === "shutdown") process.exit(0);
  if (m.id === undefined) return;
  process.stdout.write(
    `${JSON.stringify({ jsonrpc: "2.0", id: m.id, result: m.method === "initialize" ? hello : result })}\n`,
  );
});
rl.on("close", () => process.exit(0));

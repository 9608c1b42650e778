#!/usr/bin/env node
// The baseline for `mu host exec`: the same plugin spawned, handshaken, sent
// one link.exec and stopped, by a script with no checks, no store and no CLI.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";

const [exe, ...args] = process.argv.slice(2);
const child = spawn(exe, args, { stdio: ["pipe", "pipe", "inherit"] });
const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
const send = (m) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...m })}\n`);

send({ id: 1, method: "initialize", params: { protocol: { major: 1, minor: 0 } } });
await lines.next();
const target = { host: { name: "h" } };
send({
  id: 2,
  method: "link.exec",
  params: { target, script: "true", cwd: ".", timeoutMs: 20000 },
});
const answer = JSON.parse((await lines.next()).value);
process.stdout.write(answer.result.stdout);
send({ method: "shutdown", params: {} });
child.stdin.end();
await new Promise((r) => child.on("exit", r));

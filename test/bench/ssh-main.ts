import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { sshReport } from "./ssh.js";

// `npm run bench:ssh [-- --quick | --rounds N]`: only the ssh tables, so
// they can be run on their own, and cheaply (--quick: 3 rounds) under load.

const argv = process.argv.slice(2);
const at = argv.indexOf("--rounds");
const rounds = at >= 0 ? Number(argv[at + 1]) : argv.includes("--quick") ? 3 : 9;
const dir = mkdtempSync(join(tmpdir(), "mu-bench-ssh-"));
try {
  process.stdout.write(`## mu over ssh\n\n${await sshReport(dir, rounds)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

#!/usr/bin/env node
// `npm run build` and `npm ci`'s prepare: tsc, then the schema's validators.
// With --if-stale (npm test, npm run scenarios, bench...) it builds only when
// a source file is newer than the last build, so a fresh `npm ci && npm test`
// compiles once, and a test run after an edit still sees the edit.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname ?? new URL(".", import.meta.url).pathname, "..");
const stamp = join(root, "dist", ".build-stamp");
const SOURCES = ["host", "sim", "plugins", "test/bench", "schemas", "tsconfig.json", "package.json", "scripts"];

function newest(path) {
  if (!existsSync(path)) return 0;
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  // A deleted file leaves nothing newer; a directory's own mtime catches it.
  let t = st.mtimeMs;
  for (const e of readdirSync(path)) t = Math.max(t, newest(join(path, e)));
  return t;
}

function upToDate() {
  if (!existsSync(stamp)) return false;
  const built = statSync(stamp).mtimeMs;
  return SOURCES.every((s) => newest(join(root, s)) < built);
}

function run(args) {
  const r = spawnSync(process.execPath, args, { cwd: root, stdio: "inherit" });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

if (process.argv.includes("--if-stale") && upToDate()) process.exit(0);
// Stamped with the start: an edit made while tsc runs is newer, so it builds next time.
const started = new Date();
run([join(root, "node_modules/typescript/bin/tsc"), "-p", "tsconfig.json"]);
run([join(root, "dist/host/protocol/build-validators.js")]);
await bundleCli();
// tsc writes plain files; the bin is linked or run by path, so it must be executable.
chmodSync(join(root, "dist/host/cli/main.js"), 0o755);
writeFileSync(stamp, `${started.toISOString()}\n`);
utimesSync(stamp, started, started);

/**
 * Every verb's code as one file (dist/mu/run-verb.js), which main.js then
 * imports instead of tsc's run-verb.js: resolving and loading the 20 to 40
 * modules a verb needs cost more than parsing one file that holds them all.
 * The rest of dist/ keeps tsc's files (the testbed imports them one by one),
 * and a later tsc alone leaves a main.js that runs them.
 */
async function bundleCli() {
  const out = join(root, "dist/mu");
  rmSync(out, { recursive: true, force: true });
  const { build } = await import("rolldown");
  await build({
    input: join(root, "dist/host/cli/run-verb.js"),
    platform: "node",
    logLevel: "warn",
    output: { dir: out, format: "esm", codeSplitting: false },
  });
  const main = join(root, "dist/host/cli/main.js");
  const from = 'const VERBS = "./run-verb.js";';
  const text = readFileSync(main, "utf8");
  if (!text.includes(from)) throw new Error(`build: ${main} no longer holds ${from}`);
  writeFileSync(main, text.replace(from, 'const VERBS = "../../mu/run-verb.js";'));
}

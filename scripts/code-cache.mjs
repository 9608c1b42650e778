#!/usr/bin/env node
// Build step: V8's code cache for the CLI bundle, written beside it as
// <bundle>.cache (host/cli/verb-bundle.ts reads and checks it).
//
// The cache is made after a warm-up run of a read-only verb, not straight
// after compiling: V8 compiles most functions only when first called, and
// only what is compiled by then goes into the cache. `mu plugin list` on a
// state directory that does not exist starts sql.js, builds an empty
// database in memory and writes nothing anywhere.
//
// Run in its own process so that nothing else this build did (tsc, rolldown)
// has set V8 flags or compiled the bundle; `--check` then loads the result
// in a fresh process, and a cache V8 would not use is not kept.
import { spawnSync } from "node:child_process";
import { mkdtempSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const [given, mode] = process.argv.slice(2);
const bundle = resolve(given);
const { cachePath, loadBundle, packCache } = await import(
  new URL("../dist/host/cli/verb-bundle.js", import.meta.url).href
);

if (mode === "--check") {
  const { cache } = loadBundle(bundle);
  process.exit(cache === "used" ? 0 : 3);
}

// mu runs without a cache, only slower: a Node that cannot make or check one
// gets none, and the build goes on (test/code-cache.test.ts fails instead).
const { crc32 } = await import(new URL("../dist/host/checksum.js", import.meta.url).href);
if (crc32(Buffer.alloc(1)) === null) {
  process.stderr.write("build: no code cache for the CLI (this Node has no zlib.crc32)\n");
  process.exit(0);
}

const home = mkdtempSync(join(tmpdir(), "mu-code-cache-"));
try {
  delete process.env.MU_TRACE_DIR;
  process.env.MU_STATE_DIR = join(home, "no-state-here");
  const { verbs, script } = loadBundle(bundle, false);
  await verbs.runVerb(["plugin", "list"]);
  if ((process.exitCode ?? 0) !== 0) {
    process.stderr.write(`build: the bundle's warm-up run exited ${process.exitCode}\n`);
    process.exit(1);
  }
  const { readFileSync } = await import("node:fs");
  const packed = packCache(readFileSync(bundle), script.createCachedData());
  const tmp = `${cachePath(bundle)}.tmp-${process.pid}`;
  writeFileSync(tmp, packed);
  renameSync(tmp, cachePath(bundle));
} finally {
  rmSync(home, { recursive: true, force: true });
}
const check = spawnSync(process.execPath, [process.argv[1], bundle, "--check"], {
  stdio: ["ignore", "ignore", "inherit"],
});
if (check.status !== 0) {
  rmSync(cachePath(bundle), { force: true });
  process.stderr.write(`build: V8 does not take the code cache it was given; none kept (${bundle})\n`);
}

#!/usr/bin/env node
// mu's bin. CommonJS on purpose: Node starts a CommonJS file some 6 ms
// sooner than an ES module (no module loader to set up first), which is
// most of what `mu --version` costs beyond Node itself. That verb is
// answered here. Every other one runs from the build's one-file bundle,
// whose loader is CommonJS too, so no verb sets up the ES module loader;
// without a bundle, or with one older than a later tsc's output, main.js
// runs tsc's files.

const argv = process.argv.slice(2);
const versionOnly =
  !process.env.MU_TRACE_DIR && argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V");

if (versionOnly) printVersion();
else if (!runBundled()) import("./main.js").catch(brokenInstall);

/**
 * Runs the verb from dist/mu/ when the build made it, and made it from the
 * tsc output beside this file; false when it did not, or a later tsc alone
 * left the bundle stale (as the sim's bin does).
 */
function runBundled(): boolean {
  const { join } = require("node:path") as typeof import("node:path");
  const { statSync } = require("node:fs") as typeof import("node:fs");
  const bundle = join(__dirname, "../../mu/run-verb.cjs");
  const mtime = (path: string) => statSync(path, { throwIfNoEntry: false })?.mtimeMs;
  const built = mtime(bundle);
  const tsc = mtime(join(__dirname, "run-verb.js"));
  if (built === undefined || (tsc !== undefined && tsc > built)) return false;
  let verbs: typeof import("./run-verb.js");
  try {
    const loader = require("../../mu/verb-bundle.cjs") as typeof import("./verb-bundle.js");
    verbs = loader.loadBundle(bundle).verbs;
  } catch (err) {
    brokenInstall(err);
    return true;
  }
  // runVerb reports its own failures; a rejection is a bug in the bundle itself.
  verbs.runVerb(argv).catch(brokenInstall);
  return true;
}

/** A broken install (a file of mu's missing or unloadable): one line, never a stack. */
function brokenInstall(err: unknown): void {
  const why = (err instanceof Error ? err.message : String(err)).split("\n")[0];
  process.stderr.write(`mu: internal: cannot load mu's verbs: ${why}; reinstall mu (npm ci)\n`);
  process.exitCode = 5;
}

/**
 * The line commander would print, and the same guard as every verb's
 * output (std-output.ts): a stdout closed before the line is written is one
 * line on stderr and exit 5, never a stack trace.
 */
function printVersion(): void {
  // dist/host/cli/ -> the package root; only the built file runs.
  const { version } = require("../../../package.json") as { version: string };
  process.stdout.on("error", () => {});
  process.stdout.write(`${version}\n`, (err) => {
    if (!err) return;
    const why = (err as NodeJS.ErrnoException).code ?? err.message;
    process.stderr.write(
      `mu: output: stdout was closed before mu had written all of it (${why}); the verb itself finished, run it again with its output read to the end\n`,
    );
    process.exitCode = 5;
  });
}

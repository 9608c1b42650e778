#!/usr/bin/env node
// mu's bin. CommonJS on purpose: Node starts a CommonJS file some 6 ms
// sooner than an ES module (no module loader to set up first), which is
// most of what `mu --version` costs beyond Node itself. That verb is
// answered here; every other one goes on to main.js, which pays the loader
// once, as before.

const argv = process.argv.slice(2);
const versionOnly =
  !process.env.MU_TRACE_DIR && argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V");

if (versionOnly) printVersion();
else
  import("./main.js").catch((err: unknown) => {
    // A broken install (main.js missing or unloadable): one line, as main.js's own.
    const why = (err instanceof Error ? err.message : String(err)).split("\n")[0];
    process.stderr.write(`mu: internal: cannot load mu's verbs: ${why}; reinstall mu (npm ci)\n`);
    process.exitCode = 5;
  });

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

#!/usr/bin/env node
// Each import below is paid by every invocation, so this file loads only
// what the invocation in hand uses: the module graph, not the verb, is most
// of a short verb's cost.

// Everything but --version. The build points BUNDLE at its one-file
// CommonJS bundle of run-verb.js (scripts/build.mjs), which verb-bundle.js
// compiles from the build's code cache; null (tsc alone) runs tsc's files.
const BUNDLE: string | null = null;

const argv = process.argv.slice(2);

if (
  !process.env.MU_TRACE_DIR &&
  argv.length === 1 &&
  (argv[0] === "--version" || argv[0] === "-V")
) {
  // The same line commander would print, without loading commander, and
  // through the same guard: a closed stdout is one line and exit 5.
  const { packageVersion } = await import("../package-root.js");
  const { exitAfterOutput, stdOutput } = await import("./std-output.js");
  const out = stdOutput(process.stdout);
  out.write(`${packageVersion()}\n`);
  process.exitCode = await exitAfterOutput(0, out, stdOutput(process.stderr));
} else {
  try {
    await (await verbs()).runVerb(argv);
  } catch (err) {
    // runVerb reports its own errors; this is a broken install. Still one line.
    const { classify } = await import("../errors.js");
    const { exit, line } = classify(err);
    process.stderr.write(`${line}\n`);
    process.exitCode = exit;
  }
}

async function verbs(): Promise<typeof import("./run-verb.js")> {
  if (BUNDLE === null) return import("./run-verb.js");
  const { loadBundle } = await import("./verb-bundle.js");
  const { fileURLToPath } = await import("node:url");
  return loadBundle(fileURLToPath(new URL(BUNDLE, import.meta.url))).verbs;
}

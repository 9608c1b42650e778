#!/usr/bin/env node
// Each import below is paid by every invocation, so this file loads only
// what the invocation in hand uses: the module graph, not the verb, is most
// of a short verb's cost.

// The build points BUNDLE at its one-file CommonJS bundle of run-verb.js
// (scripts/build.mjs), which verb-bundle.js compiles from the build's code
// cache; null (tsc alone) runs tsc's files. The bin, mu.cjs, answers
// --version itself and imports this file for every other verb.
const BUNDLE: string | null = null;

try {
  await (await verbs()).runVerb(process.argv.slice(2));
} catch (err) {
  // runVerb reports its own errors: what lands here is a file of mu's
  // missing or unloadable (the bundle the build named, a module of tsc's),
  // a broken install, said in the bin's words (mu.cts), not a bug in mu.
  const why = (err instanceof Error ? err.message : String(err)).split("\n")[0];
  process.stderr.write(`mu: internal: cannot load mu's verbs: ${why}; reinstall mu (npm ci)\n`);
  process.exitCode = 5;
}
async function verbs(): Promise<typeof import("./run-verb.js")> {
  if (BUNDLE === null) return import("./run-verb.js");
  const { loadBundle } = await import("./verb-bundle.js");
  const { fileURLToPath } = await import("node:url");
  return loadBundle(fileURLToPath(new URL(BUNDLE, import.meta.url))).verbs;
}

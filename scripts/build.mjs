#!/usr/bin/env node
// `npm run build` and `npm ci`'s prepare: tsc, then the schema's validators.
// With --if-stale (npm test, npm run scenarios, bench...) it builds only when
// a source file is newer than the last build, so a fresh `npm ci && npm test`
// compiles once, and a test run after an edit still sees the edit.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";

const require = createRequire(import.meta.url);
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
chmodSync(join(root, "dist/host/cli/mu.cjs"), 0o755);
chmodSync(join(root, "dist/host/cli/main.js"), 0o755);
writeFileSync(stamp, `${started.toISOString()}\n`);
utimesSync(stamp, started, started);

/**
 * Every verb's code as one file (dist/mu/run-verb.cjs), which main.js then
 * loads instead of tsc's run-verb.js: resolving and loading the 20 to 40
 * modules a verb needs cost more than parsing one file that holds them all.
 * CommonJS, so that it can start from V8's code cache (host/cli/verb-bundle.ts,
 * scripts/code-cache.mjs). The rest of dist/ keeps tsc's files (the testbed
 * imports them one by one), and a later tsc alone leaves a main.js that runs
 * them.
 */
async function bundleCli() {
  const out = join(root, "dist/mu");
  rmSync(out, { recursive: true, force: true });
  let build;
  try {
    ({ build } = await import("rolldown"));
  } catch (err) {
    // No bundler for this platform: mu still runs, from tsc's files.
    process.stderr.write(`build: not bundling the CLI (${err.message.split("\n")[0]})\n`);
    return;
  }
  const file = join(out, "run-verb.cjs");
  await oneFile(build, "dist/host/cli/run-verb.js", "the CLI", { file, format: "cjs" });
  // The loader that compiles it, CommonJS too: the bin requires it directly,
  // so a verb sets up no ES module loader at all (some 5 ms a verb).
  await oneFile(build, "dist/host/cli/verb-bundle.js", "the CLI's loader", {
    file: join(out, "verb-bundle.cjs"),
    format: "cjs",
  });
  // vm.Script, which runs the bundle, has no loader for import(): every
  // dynamic import must have been inlined. Comment lines (JSDoc types) aside.
  const left = readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => /\bimport\(/.test(l) && !/^\s*(\*|\/\/)/.test(l));
  if (left.length > 0) throw new Error(`build: ${file} still imports at run time: ${left[0]}`);
  // The bundle holds sql.js's JavaScript half; its wasm half goes beside it
  // from the same install, so the two always match and a verb reads it by a
  // path of its own instead of resolving sql.js's package exports (some ms).
  copyFileSync(require.resolve("sql.js/dist/sql-wasm.wasm"), join(out, "sql-wasm.wasm"));
  // The sim starts once or more per verb in every scenario the real engine
  // runs; one file instead of its 25 modules is some 10 ms of CPU a start.
  // sim/bin/mu-plugin-sim runs it when it is no older than tsc's files.
  await oneFile(build, "dist/sim/main.js", "the sim", { file: join(out, "sim.js"), format: "esm" });
  // mu-plugin-ssh starts once per verb that reaches a host over ssh, and its
  // start is on that verb's path: one file, as for the sim
  // (plugins/ssh/bin/plugin.mjs, which mu-plugin-ssh runs, takes it unless tsc's files are newer).
  await oneFile(build, "dist/plugins/ssh/main.js", "the ssh plugin", {
    file: join(out, "ssh-plugin.js"),
    format: "esm",
  });
  const main = join(root, "dist/host/cli/main.js");
  const from = "const BUNDLE = null;";
  const text = readFileSync(main, "utf8");
  if (!text.includes(from)) throw new Error(`build: ${main} no longer holds ${from}`);
  writeFileSync(main, text.replace(from, 'const BUNDLE = "../../mu/run-verb.cjs";'));
  // Its warm-up verb prints to stdout, which is no part of the build's output.
  const made = spawnSync(process.execPath, [join(root, "scripts/code-cache.mjs"), file], {
    cwd: root,
    stdio: ["ignore", "ignore", "inherit"],
  });
  if (made.status !== 0) process.exit(made.status ?? 1);
}

/**
 * Bundles one of tsc's files and all it imports into one file. A warning (an
 * import the bundle cannot satisfy) is a broken bin, so it fails the build.
 */
function oneFile(build, input, what, output) {
  return build({
    input: join(root, input),
    platform: "node",
    plugins: [lazyBuiltins(["node:crypto", "node:child_process"])],
    // What users run holds no planted bug: host/testbed-plant.ts reads this
    // as the constant false, and the bundler drops every plant with it.
    transform: { define: { MU_TESTBED_BUILD: "false" } },
    onLog(level, log, handler) {
      if (level === "warn") throw new Error(`build: bundling ${what}: ${log.message}`);
      handler(level, log);
    },
    output: { ...output, codeSplitting: false },
  });
}

/**
 * One bundle hoists every module's imports to its top, so each verb would
 * load every builtin any verb uses. These two cost some 10 ms and only the
 * verbs that spawn or hash need them: the bundle gets stand-ins whose
 * functions load the real module on first call. Only functions are stood in
 * for; importing anything else from them fails the build (see onLog).
 */
function lazyBuiltins(names) {
  const PREFIX = "\0lazy:";
  return {
    name: "lazy-builtins",
    resolveId(id) {
      return names.includes(id) ? PREFIX + id : null;
    },
    load(id) {
      if (!id.startsWith(PREFIX)) return null;
      const name = id.slice(PREFIX.length);
      const fns = Object.keys(require(name)).filter(
        (k) => /^[a-z]/.test(k) && typeof require(name)[k] === "function",
      );
      return [
        'import { createRequire } from "node:module";',
        "let real;",
        `const load = () => (real ??= createRequire(import.meta.url)(${JSON.stringify(name)}));`,
        ...fns.map((f) => `export function ${f}(...args) { return load().${f}(...args); }`),
      ].join("\n");
    },
  };
}

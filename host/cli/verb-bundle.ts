import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname } from "node:path";
import { Script } from "node:vm";
import { crc32 } from "../checksum.js";
import { setWasmFlags } from "../store/wasm-flags.js";

// The build's one-file CLI is CommonJS so that V8 can compile it as a
// classic script, and a classic script can start from a code cache: the
// bytecode of the bundle (and of the functions a warm-up run compiled) as
// V8 serialised it at build time (scripts/code-cache.mjs), instead of
// parsing and compiling some 500 KB of JavaScript on every invocation.
//
// V8 itself refuses a cache from another V8 version or other flags, but it
// checks the source only by its length and, outside debug builds, does not
// checksum the payload. So the cache file carries CRC-32s of the bundle it
// was made from and of its own payload; any mismatch, a missing file or a
// Node without zlib.crc32 means compiling from source, as without a cache.

type Verbs = typeof import("./run-verb.js");

/** What happened to the code cache: only "used" saves anything. */
export type CacheUse = "used" | "rejected" | "stale" | "corrupt" | "none";

const MAGIC = "muC1";
const HEADER = 12; // magic, CRC-32 of the bundle, CRC-32 of the payload

/** Where the cache for a bundle lives: beside it, made by the same build. */
export function cachePath(bundle: string): string {
  return `${bundle}.cache`;
}

/** The cache file's bytes for a payload V8 made from `source`. */
export function packCache(source: Uint8Array, payload: Uint8Array): Buffer {
  const head = Buffer.alloc(HEADER);
  head.write(MAGIC, 0, "latin1");
  head.writeUInt32LE(crc32(source) ?? 0, 4);
  head.writeUInt32LE(crc32(payload) ?? 0, 8);
  return Buffer.concat([head, payload]);
}

/** The payload, if `file` holds a whole cache made from exactly `source`. */
function unpackCache(
  source: Uint8Array,
  file: Buffer | null,
): { payload: Buffer } | { why: CacheUse } {
  if (file === null) return { why: "none" };
  const sum = crc32(source);
  if (sum === null) return { why: "none" };
  if (file.length <= HEADER || file.toString("latin1", 0, 4) !== MAGIC) return { why: "corrupt" };
  if (file.readUInt32LE(4) !== sum) return { why: "stale" };
  const payload = file.subarray(HEADER);
  if (file.readUInt32LE(8) !== crc32(payload)) return { why: "corrupt" };
  return { payload };
}

function readOrNull(path: string): Buffer | null {
  try {
    return readFileSync(path);
  } catch {
    return null;
  }
}

export interface Loaded {
  verbs: Verbs;
  cache: CacheUse;
  /** The compiled bundle, for the build to serialise after a warm-up run. */
  script: Script;
}

/**
 * Compiles and runs the bundle at `bundle` as CommonJS, from its code cache
 * when the cache fits. `useCache: false` is the build's: it makes the cache.
 */
export function loadBundle(bundle: string, useCache = true): Loaded {
  // V8 takes a cache only under the flags it was made with, and sql.js sets
  // its wasm flags on first use: set first, they are the same when the build
  // makes the cache and whenever mu uses it. They concern only wasm.
  setWasmFlags();
  const bytes = readFileSync(bundle);
  const found = useCache
    ? unpackCache(bytes, readOrNull(cachePath(bundle)))
    : { why: "none" as const };
  const cachedData = "payload" in found ? found.payload : undefined;
  // The same wrapper Node gives a CommonJS file, so the bundle's require,
  // module and __filename mean what they would there.
  const script = new Script(
    `(function (exports, require, module, __filename, __dirname) {${bytes.toString("utf8")}\n})`,
    { filename: bundle, ...(cachedData ? { cachedData } : {}) },
  );
  const cache: CacheUse =
    "why" in found ? found.why : script.cachedDataRejected ? "rejected" : "used";
  const module = { exports: {} as Verbs };
  const body = script.runInThisContext() as (...args: unknown[]) => void;
  body.call(module.exports, module.exports, createRequire(bundle), module, bundle, dirname(bundle));
  return { verbs: module.exports, cache, script };
}

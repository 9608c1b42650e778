import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import type { SqlJsStatic } from "sql.js";
import { setWasmFlags } from "./wasm-flags.js";

let loading: Promise<SqlJsStatic> | undefined;

/**
 * sql.js, compiled on first use and shared by the whole process: a verb that
 * needs no database never pays for the wasm.
 */
export function sqlJs(): Promise<SqlJsStatic> {
  loading ??= init().catch((err: unknown) => {
    // A failed load is not cached; the next caller tries again.
    loading = undefined;
    throw err;
  });
  return loading;
}

async function init(): Promise<SqlJsStatic> {
  setWasmFlags();
  // The wasm is part of mu's own install, not of its state, so it is read
  // straight from disk rather than through the FileSystem port (which the
  // virtual engine points at an in-memory disk). Handing sql.js the bytes
  // skips its fetch-style locateFile path, which is slower.
  const file = wasmFile();
  const wasmBinary = file.buffer.slice(file.byteOffset, file.byteOffset + file.byteLength);
  // import(), not require: the CLI's bundle then holds sql.js's JavaScript
  // half, so its code cache covers it too (host/cli/verb-bundle.ts). Loaded
  // from tsc's files (the testbed) it costs a scan of its source, once.
  const { default: initSqlJs } = await import("sql.js");
  return initSqlJs({ wasmBinary: wasmBinary as ArrayBuffer });
}

/**
 * The CLI's bundle has its own copy beside it (scripts/build.mjs), made with
 * the sql.js JavaScript it holds; tsc's files and the testbed read the
 * package's, found through its exports map.
 */
function wasmFile(): Buffer {
  try {
    return readFileSync(new URL("sql-wasm.wasm", import.meta.url));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  return readFileSync(createRequire(import.meta.url).resolve("sql.js/dist/sql-wasm.wasm"));
}

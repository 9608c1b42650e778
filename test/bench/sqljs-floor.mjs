#!/usr/bin/env node
// Context for `mu plugin list`'s ratio: what any verb that reads mu's
// database pays before mu's own code runs. sql.js started as mu starts it
// (the same V8 flags, the wasm handed over as bytes), the file opened and
// one table read, with no checks, no CLI and no code cache.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--liftoff-only");
setFlagsFromString("--wasm-lazy-validation");
const [dbFile] = process.argv.slice(2);
const require = createRequire(import.meta.url);
const wasm = readFileSync(require.resolve("sql.js/dist/sql-wasm.wasm"));
const { default: initSqlJs } = await import("sql.js");
const SQL = await initSqlJs({
  wasmBinary: wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength),
});
const db = new SQL.Database(readFileSync(dbFile));
const rows = db.exec("SELECT name FROM plugins ORDER BY name")[0]?.values ?? [];
process.stdout.write(rows.map((r) => `${r[0]}\n`).join(""));

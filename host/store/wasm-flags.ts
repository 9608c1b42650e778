import { setFlagsFromString } from "node:v8";

/**
 * V8 flags for sql.js's wasm, set before it is compiled. An invocation runs
 * a handful of small queries, so:
 * - --liftoff-only: optimising the 700 KB module in the background costs
 *   more than it ever saves, and V8 holds the process open at exit until
 *   that compile finishes (about 200 ms here);
 * - --wasm-lazy-validation: each function is checked when first compiled
 *   (V8 compiles lazily already) rather than all of them before the module
 *   starts; the module is sql.js's own shipped file.
 * The CLI's loader sets them before compiling its bundle too, since V8's
 * code cache is only taken under the flags it was made with.
 */
export function setWasmFlags(): void {
  setFlagsFromString("--liftoff-only");
  setFlagsFromString("--wasm-lazy-validation");
}

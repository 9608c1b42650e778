import { readFileSync } from "node:fs";

// Node hands mu its arguments as strings, with any bytes that are not UTF-8
// already turned into U+FFFD: only the kernel's copy shows what was typed.

/**
 * The last `count` arguments of this process as the kernel holds them, or
 * null where that copy cannot be read (no /proc) or does not line up.
 */
export function rawArgs(count: number): Buffer[] | null {
  let all: Buffer;
  try {
    all = readFileSync("/proc/self/cmdline");
  } catch {
    return null;
  }
  // Each argument ends in a NUL, the last one too.
  const body = all.at(-1) === 0 ? all.subarray(0, -1) : all;
  const parts: Buffer[] = [];
  let from = 0;
  for (let i = body.indexOf(0); i !== -1; i = body.indexOf(0, from)) {
    parts.push(body.subarray(from, i));
    from = i + 1;
  }
  parts.push(body.subarray(from));
  return parts.length >= count ? parts.slice(parts.length - count) : null;
}

import { isUtf8 } from "node:buffer";
import { UsageError } from "../errors.js";

// Every text mu passes on (a script, a message for an agent) travels as JSON,
// which holds UTF-8 only. An argument with other bytes would reach the
// plugin with U+FFFD in their place and the verb would still succeed, so it
// is refused, as a --file that is not UTF-8 is.

/** The index of the first argument that is not UTF-8, or undefined. */
export function firstNotUtf8(
  args: readonly string[],
  raw: readonly Uint8Array[] | null,
): number | undefined {
  for (const [i, a] of args.entries()) {
    const bytes = raw?.[i];
    // Without the kernel's copy, a U+FFFD is the only trace left of such bytes.
    const bad = bytes === undefined ? a.includes("\uFFFD") : !isUtf8(bytes);
    if (bad) return i;
  }
  return undefined;
}

/** Printable ASCII as it is, every other byte as \xNN; long ones cut. */
function shown(bytes: Uint8Array): string {
  const MAX = 40;
  let out = "";
  for (const b of bytes.subarray(0, MAX)) {
    out +=
      b >= 0x20 && b < 0x7f && b !== 0x5c && b !== 0x27
        ? String.fromCharCode(b)
        : `\\x${b.toString(16).padStart(2, "0")}`;
  }
  return bytes.length > MAX ? `${out}...` : out;
}

/** Throws the one-line refusal when an argument is not UTF-8. */
export function checkArgsUtf8(args: readonly string[], raw: readonly Uint8Array[] | null): void {
  const i = firstNotUtf8(args, raw);
  if (i === undefined) return;
  const bytes = raw?.[i] ?? Buffer.from(args[i] as string, "utf8");
  throw new UsageError(
    "argv.not-utf8",
    "usage",
    `argument ${i + 1} ('${shown(bytes)}') holds bytes that are not UTF-8`,
    { hint: "mu passes text on as JSON, which carries UTF-8 only: convert it (iconv -t UTF-8)" },
  );
}

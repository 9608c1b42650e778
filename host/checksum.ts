import * as zlib from "node:zlib";

/**
 * CRC-32 of the bytes, or null on a Node without zlib.crc32 (before 20.15).
 * For noticing that a file is not the one a build step saw, cheaply; never
 * as a defence against someone who can write mu's own files.
 */
export function crc32(bytes: Uint8Array): number | null {
  const fn = (zlib as { crc32?: (data: Uint8Array) => number }).crc32;
  return typeof fn === "function" ? fn(bytes) : null;
}

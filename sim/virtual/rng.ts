import type { Randomness } from "../../host/ports/types.js";

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** mu's randomness on the virtual engine: keys and ids repeat with the seed, so a run replays byte for byte. */
export function seededRandom(seed: number): Randomness {
  const next = rng(seed);
  return {
    hex: (bytes) =>
      Array.from({ length: bytes }, () =>
        Math.floor(next() * 256)
          .toString(16)
          .padStart(2, "0"),
      ).join(""),
    fraction: next,
  };
}

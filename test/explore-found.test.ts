import { describe, expect, it } from "vitest";
import { check, workload } from "../sim/virtual/explore.js";
import { canaryFor } from "../sim/virtual/invariants.js";
import { FOUND } from "./explore-found-seeds.js";

describe("seeds the explorer once broke", () => {
  it.each(FOUND)("seed %i holds (%s)", async (seed) => {
    const s = workload(seed, { MU_PLUGIN_CANARY: canaryFor(seed) });
    expect(await check(s)).toEqual([]);
  });
});

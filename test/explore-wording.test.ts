import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";

it("the explorer counts one run as '1 run'", () => {
  const r = spawnSync(
    process.execPath,
    [
      join(packageRoot(), "dist/sim/virtual/explore-main.js"),
      "--seed",
      "2",
      "--runs",
      "1",
      "--workers",
      "1",
    ],
    { encoding: "utf8", timeout: 60_000 },
  );
  expect(r.stdout).toMatch(/^explore: 1 run from seed 2, every invariant held \(/);
  expect(r.status).toBe(0);
}, 60_000);

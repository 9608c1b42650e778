import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot, packageVersion } from "../host/package-root.js";

// mu finds what it ships (the schema, the validators, its version) by
// walking up from its own module to the package: the same from host/ under
// the tests and from dist/host/ in the built bin.

describe("the package", () => {
  it("is found above this module, holding package.json and schemas/", () => {
    const root = packageRoot();
    expect(existsSync(join(root, "package.json"))).toBe(true);
    expect(existsSync(join(root, "schemas", "plugin-protocol-v1.json"))).toBe(true);
    expect(packageRoot()).toBe(root);
  });

  it("gives the version package.json names, every time it is asked", () => {
    const { version } = JSON.parse(readFileSync(join(packageRoot(), "package.json"), "utf8"));
    expect(packageVersion()).toBe(version);
    expect(packageVersion()).toBe(version);
  });
});

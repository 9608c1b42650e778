import { describe, expect, it } from "vitest";
import { DEFAULT_NAME, nameFrom } from "../plugins/ssh/name.js";

// The ssh plugin answers the handshake with the name its path gives it, as
// mu's trust rule reads that path: mu-plugin-<name>. Anything mu could not
// have registered under that basename is a start by hand, named ssh.

describe("the ssh plugin's name, from the path it was started as", () => {
  it.each([
    ["/opt/mu/plugins/ssh/bin/mu-plugin-ssh", "ssh"],
    ["/home/me/bin/mu-plugin-box2", "box2"],
    ["mu-plugin-box2", "box2"],
    ["./mu-plugin-gpu-1", "gpu-1"],
    [`/x/mu-plugin-${"a".repeat(63)}`, "a".repeat(63)],
    ["/x/mu-plugin-0", "0"],
  ])("%s answers as %s", (path, name) => {
    expect(nameFrom(path)).toBe(name);
  });

  it.each([
    [undefined],
    [""],
    ["/usr/bin/node"],
    ["/x/plugin.mjs"],
    ["/x/mu-plugin-"],
    ["/x/mu-plugin-Box2"],
    ["/x/mu-plugin--box"],
    ["/x/mu-plugin-box_2"],
    ["/x/mu-plugin-box.2"],
    [`/x/mu-plugin-${"a".repeat(64)}`],
    ["/x/mu-plugin-box2/"],
    ["/x/my-mu-plugin-box2"],
    ["/x/mu-plugin-box2\n"],
  ])("%j is no registrable basename, so ssh", (path) => {
    expect(nameFrom(path)).toBe(DEFAULT_NAME);
  });

  it("the default is ssh", () => {
    expect(DEFAULT_NAME).toBe("ssh");
  });
});

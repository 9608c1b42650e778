import { describe, expect, it } from "vitest";
import { commandPaths } from "../host/cli/program.js";
import { mu } from "./helpers.js";

// What --help must say beside each flag: that it is required, its default,
// what a template's placeholders are; and that a flag name means one unit
// wherever it appears.

describe("mu's help", () => {
  it.each([
    [["host", "add"], /--plugin <plugin>\s+the plugin that is the host's link \(required\)/],
    [["agent", "spawn"], /--host <host>\s+the host to run it on \(required\)/],
    [["wait"], /--timeout <seconds>\s+[\s\S]*?\(default: none, wait until they settle\)/],
    [["host", "add"], /--max-sessions <n>\s+[\s\S]*?\(default: no\s+limit\)/],
    [["host", "add"], /--fetch <template>\s+[\s\S]*?\{host\}[\s\S]*?\{remoteCwd\}/],
    [["host", "exec"], /--timeout-ms <ms>\s+[\s\S]*?\(default: 20000\)/],
  ])("%j --help: %s", async (verb, pattern) => {
    const r = await mu([...verb, "--help"], {});
    expect(r.stdout).toMatch(pattern);
  });

  it("mu help <group> <verb> prints the verb's help, not the group's", async () => {
    const asked = await mu(["help", "agent", "spawn"], {});
    const own = await mu(["agent", "spawn", "--help"], {});
    expect(asked.code).toBe(0);
    expect(asked.stdout).toBe(own.stdout);
    expect(asked.stdout).toMatch(/^Usage: mu agent spawn /);
  });

  it("gives every flag name one unit across the whole CLI", async () => {
    const units = new Map<string, Set<string>>();
    for (const p of await commandPaths()) {
      const r = await mu([...p, "--help"], {});
      for (const m of r.stdout.matchAll(
        /^\s+(?:-\w, )?(--[a-z-]+) <\w+>\s+([\s\S]*?)(?=^\s+-|^$)/gm,
      )) {
        const unit = /\b(milliseconds|seconds)\b/.exec((m[2] ?? "").replace(/\s+/g, " "))?.[1];
        if (!unit) continue;
        const seen = units.get(m[1] as string) ?? new Set<string>();
        seen.add(unit);
        units.set(m[1] as string, seen);
      }
    }
    expect(units.get("--timeout")).toEqual(new Set(["seconds"]));
    expect(units.get("--timeout-ms")).toEqual(new Set(["milliseconds"]));
    for (const [flag, seen] of units) expect([flag, seen.size]).toEqual([flag, 1]);
  });
});

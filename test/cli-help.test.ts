import { describe, expect, it } from "vitest";
import { commandPaths } from "../host/cli/program.js";
import { mu } from "./helpers.js";

// Every command's --help, and what a namespace says without a verb, kept
// in one file: splitting or loading the CLI in parts must not change a word
// of it. After a deliberate change: npx vitest run -u.

describe("the whole CLI's help", () => {
  it("is what the snapshot holds, command by command", async () => {
    const paths = await commandPaths();
    expect(paths.length).toBeGreaterThan(30);
    const asks = [
      ...paths.map((p) => [...p, "--help"]),
      ["help", "agent"],
      ["plugin"],
      ["plugin", "nope"],
      ["nope"],
      ["plugin", "lst"],
      ["--version"],
    ];
    const parts: string[] = [];
    for (const args of asks) {
      const r = await mu(args, {});
      parts.push(`$ mu ${args.join(" ")}\nexit ${r.code}\n${r.stdout}${r.stderr}`);
    }
    await expect(parts.join("\n")).toMatchFileSnapshot("__snapshots__/cli-help.txt");
  });
});

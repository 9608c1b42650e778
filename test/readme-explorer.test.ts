import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";

// The README shows the explorer finding a planted bug: the command, what it
// printed and the scenario it wrote. This runs that command (its --out in a
// temp dir) and checks both against what the README quotes.

it("the README's explorer command prints what the README shows and writes the scenario it quotes", () => {
  const readme = readFileSync(join(packageRoot(), "README.md"), "utf8");
  const at = readme.indexOf("## The explorer at work");
  expect(at).toBeGreaterThan(-1);
  const section = readme.slice(at);
  const sh = /```sh\nnpm run explore -- (.+) --out \/tmp\/found\n((?:# .*\n)+)```/.exec(section);
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section);
  expect(sh && yaml).toBeTruthy();
  const out = mkdtempSync(join(tmpdir(), "mu-readme-explore-"));
  try {
    const r = spawnSync(
      process.execPath,
      [
        join(packageRoot(), "dist/sim/virtual/explore-main.js"),
        ...(sh?.[1] ?? "").split(" "),
        "--out",
        out,
      ],
      { encoding: "utf8", timeout: 110_000 },
    );
    const shown = (sh?.[2] ?? "").replace(/^# /gm, "").replaceAll("/tmp/found", out);
    expect(r.stdout).toBe(shown);
    expect(r.status).toBe(1);
    const file = /shrunk to (\S+)/.exec(shown)?.[1] ?? "";
    const written = readFileSync(file, "utf8").split("\n");
    // The README leaves out the about, proves and the last steps.
    for (const line of (yaml?.[1] ?? "").trimEnd().split("\n")) expect(written).toContain(line);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}, 120_000);

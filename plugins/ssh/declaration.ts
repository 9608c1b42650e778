import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { MAX_SCRIPT_BYTES } from "./link.js";

// What the plugin declares at the handshake. The schema digest is of the
// published schema file shipped beside the plugin in this package.

export const VERSION = "0.1.0";

function schemaFile(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const f = join(dir, "schemas", "plugin-protocol-v1.json");
    if (existsSync(f)) return f;
    const up = dirname(dir);
    if (up === dir) throw new Error("mu-plugin-ssh: schemas/plugin-protocol-v1.json not found");
    dir = up;
  }
}

export function schemaDigest(): string {
  return `sha256:${createHash("sha256").update(readFileSync(schemaFile())).digest("hex")}`;
}

/** The channel is named after the plugin, so each registration's is its own. */
export function seams(withAgents: boolean, name: string): Record<string, unknown> {
  const link = {
    fetch: true,
    push: true,
    slots: "self",
    remoteOnTimeout: "stopped",
    quiescence: "provable",
    maxScriptBytes: MAX_SCRIPT_BYTES,
    checks: ["template", "reach"],
  };
  if (!withAgents) return { link };
  return {
    link,
    job: {
      kind: "ssh",
      view: "detached",
      handle: "pane",
      start: { lookup: true, fenceKey: true, inFlightMs: 60_000 },
      channel: name,
      checks: ["agent"],
    },
    channel: {
      name,
      caps: {
        fence: "none",
        receipt: "exact",
        dedupe: "exact",
        steer: "none",
        interrupt: "emulated",
        fresh: "in-place",
        answer: false,
        command: false,
        watch: "stream",
        settleText: "truncated",
      },
    },
  };
}

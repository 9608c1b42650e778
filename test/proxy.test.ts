import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { packageRoot } from "../host/package-root.js";
import { runScenario } from "../sim/runner/execute.js";
import { loadScenario } from "../sim/runner/load.js";
import { whyNotViaProxy } from "../sim/runner/via-proxy.js";

// mu-plugin-sim --proxy in front of a real plugin (the sim's own binary): a
// scenario file of the replay table runs unchanged with its plugin behind
// the proxy, and passes with the same outcomes (spec: Effects and replay).

const file = (id: string) => loadScenario(join(packageRoot(), "scenarios", `${id}.yaml`));

describe("scenarios behind the fault proxy", () => {
  it.each([
    "host/sweep-acquire-reply-read",
    "host/lookup-found-after-mu-sigkilled",
    "host/unknown-outcome-applied",
  ])(
    "%s passes with its plugin behind the proxy",
    async (id) => {
      const s = file(id);
      expect(whyNotViaProxy(s)).toBeUndefined();
      const r = await runScenario(s, { viaProxy: true, readBack: true });
      expect(r.failure).toBeUndefined();
      // It really went through the proxy: the real plugin's exit is the proxy's note.
      const notes = (r.transcript as { dir: string; msg: Record<string, unknown> }[]).filter(
        (e) => e.dir === "note" && "proxied" in e.msg,
      );
      expect(notes.length).toBeGreaterThan(0);
      expect(r.effects?.[Object.keys(r.effects ?? {})[0] ?? ""]).toBe(1);
    },
    60_000,
  );

  it("names why a scenario cannot go behind it", () => {
    const canary = {
      ...file("host/acquire-status-release"),
      world: { faults: [{ on: "*", do: { leakCanary: "reply" as const } }] },
    };
    expect(whyNotViaProxy(canary)).toMatch(/leakCanary fault acts inside/);
  });
});

import { describe, expect, it } from "vitest";
import { hideCanary } from "../host/contract/canary.js";
import { clip } from "../host/contract/wire.js";

// The contract suite quotes a plugin's text in its evidence, clipped to a
// few hundred characters; the canary mask must catch one the clip cut.

describe("the contract suite's canary mask", () => {
  const canary = "canary-0123456789abcdef0123456789abcdef";

  it("leaves no prefix of a canary the clip cut in two", () => {
    for (const before of [230, 233, 236]) {
      const shown = hideCanary(clip(`${"x".repeat(before)}${canary} tail`), canary);
      expect(shown).toContain("<canary>… (");
      // "canary-" is the fixed part; its random tail must not start to show.
      expect(shown).not.toContain(canary.slice(0, 8));
    }
  });

  it("masks a whole canary and leaves a clipped text without one as it was", () => {
    expect(hideCanary(`a ${canary} b`, canary)).toBe("a <canary> b");
    const plain = clip("y".repeat(300));
    expect(hideCanary(plain, canary)).toBe(plain);
  });
});

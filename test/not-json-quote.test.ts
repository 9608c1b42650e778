import { expect, it } from "vitest";
import { hideCanary } from "../host/contract/canary.js";
import { notJson } from "../host/plugin/envelope.js";
import { mu, tempState } from "./helpers.js";
import { fixtureDir } from "./plugin-fixtures.js";

// A line that is not JSON is quoted in the refusal, cut, in a form the plugin
// check's canary mask still recognises when a secret runs across the cut;
// mu's own secrets are masked in it before the cut.

it("quotes a short line whole", () => {
  expect(notJson("connecting to backend...")).toBe('not JSON: "connecting to backend..."');
});

it("cuts a long line and says how long it was", () => {
  const line = `log: ${"x".repeat(200)}`;
  const why = notJson(line);
  expect(why).toBe(`not JSON: "log: ${"x".repeat(75)}… (205 chars)"`);
});

it("leaves no part of a canary that the cut splits", () => {
  const canary = "canary-5f0c1d2e3a4b";
  const line = `${"a".repeat(70)}${canary} and more`;
  const masked = hideCanary(notJson(line), canary);
  expect(masked).not.toContain("canary-5f0");
  expect(masked).toContain("<canary>… (");
});

it("masks a secret of mu's environment in the quoted line, before its cut, and in the stderr line", async () => {
  const fx = fixtureDir();
  const state = tempState();
  try {
    const secret = "tok-5f0c1d2e3a4b9c8d";
    // The secret starts before the quote's 80-character cut and runs across it.
    const argv = fx.plugin("leaky", {
      helloRaw: `${"d".repeat(75)}${secret} more`,
      helloDelayMs: 200,
      stderr: `starting with ${secret}`,
    });
    const r = await mu(["plugin", "add", "leaky", "--", ...argv], {
      ...state.env,
      MU_TEST_TOKEN: secret,
    });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(
      /^mu: plugin: 'leaky' refused \(handshake\.invalid\): not JSON: "d{75}\[mask… \(\d+ chars\)" \(stderr: starting with \[masked\]\); /,
    );
    expect(r.stderr).not.toContain(secret.slice(0, 4));
  } finally {
    fx.done();
    state.done();
  }
});

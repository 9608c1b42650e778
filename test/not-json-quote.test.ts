import { expect, it } from "vitest";
import { hideCanary } from "../host/contract/canary.js";
import { notJson } from "../host/plugin/envelope.js";

// A line that is not JSON is quoted in the refusal, cut, in a form the plugin
// check's canary mask still recognises when a secret runs across the cut.

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

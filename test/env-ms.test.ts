import { describe, expect, it } from "vitest";
import {
  bounded,
  checkEnvMs,
  decimal,
  envMs,
  MS_VARIABLES,
  type MsVariable,
} from "../host/env-ms.js";
import { UsageError } from "../host/errors.js";

// Numbers a person types are plain decimal: what JavaScript's Number() also
// takes (hex, exponents, signs, spaces, leading zeros) is refused.

describe("decimal", () => {
  it.each([
    ["0", true, 0],
    ["7", true, 7],
    ["86400000", true, 86_400_000],
    ["10", true, 10],
    ["0.5", false, 0.5],
    ["0.001", false, 0.001],
    ["12.25", false, 12.25],
    ["600", false, 600],
  ])("%j (whole: %s) is %d", (raw, whole, want) => {
    expect(decimal(raw, whole)).toBe(want);
  });

  it.each([
    ["", true],
    [" 5", true],
    ["5 ", true],
    ["+5", true],
    ["-5", true],
    ["007", true],
    ["00", true],
    ["0x10", true],
    ["0o7", true],
    ["0b1", true],
    ["1e3", true],
    ["1E3", true],
    ["1_000", true],
    ["Infinity", true],
    ["NaN", true],
    ["1.5", true],
    ["５", true],
    [".5", false],
    ["5.", false],
    ["1.5e2", false],
    ["01.5", false],
    ["-0.5", false],
    ["0x1.8", false],
    ["1..5", false],
  ])("%j (whole: %s) is refused", (raw, whole) => {
    expect(decimal(raw, whole)).toBeNaN();
  });

  it("takes a minus sign only where the range is signed, and still refuses leading zeros", () => {
    expect(decimal("-5000", true, true)).toBe(-5000);
    expect(decimal("-5000", true, false)).toBeNaN();
    expect(decimal("-05", true, true)).toBeNaN();
    expect(decimal("+5", true, true)).toBeNaN();
    expect(decimal("--5", true, true)).toBeNaN();
  });
});

describe("bounded", () => {
  const timeout = {
    name: "--timeout",
    unit: "milliseconds",
    min: 1,
    max: 86_400_000,
    whole: true,
    example: 20000,
    code: "t",
  };
  it.each(["0x10", "1e3", " 5", "+5", "007", "0", "86400001"])(
    "refuses --timeout %j in one line naming the unit, the range and the form",
    (raw) => {
      expect(() => bounded(raw, timeout)).toThrow(UsageError);
      try {
        bounded(raw, timeout);
      } catch (err) {
        expect((err as UsageError).line()).toMatch(
          /^mu: usage: --timeout '[^']*' is not valid; give a whole number of milliseconds from 1 to 86400000, in plain digits, e\.g\. --timeout 20000$/,
        );
      }
    },
  );
});

describe("the MU_*_MS variables", () => {
  const names = Object.keys(MS_VARIABLES) as MsVariable[];

  it.each(names)("%s: unset or empty is its default; plain digits in range are taken", (name) => {
    const v = MS_VARIABLES[name];
    expect(envMs({}, name)).toBe(v.fallback);
    expect(envMs({ [name]: "" }, name)).toBe(v.fallback);
    expect(envMs({ [name]: "0" }, name)).toBe(0);
    expect(envMs({ [name]: String(v.max) }, name)).toBe(v.max);
  });

  it.each(
    names.flatMap((n) => ["0x10", "1e3", " 5", "+5", "007", "2.5", "soon"].map((b) => [n, b])),
  )("%s=%j is refused with the variable, its unit and its range", (name, bad) => {
    expect(() => envMs({ [name]: bad }, name as MsVariable)).toThrow(
      new RegExp(`^${name}='[^']*' is not valid$`),
    );
    // checkEnvMs refuses it whatever else is set, as every verb's first step.
    expect(() => checkEnvMs({ [name]: bad })).toThrow(UsageError);
  });

  it("checkEnvMs passes an environment whose MU_*_MS values are all valid or unset", () => {
    expect(() =>
      checkEnvMs({ MU_LOCK_TIMEOUT_MS: "500", MU_CLOCK_OFFSET_MS: "-60000" }),
    ).not.toThrow();
    expect(() => checkEnvMs({ MU_SOMETHING_ELSE_MS: "0x10" })).not.toThrow();
  });
});

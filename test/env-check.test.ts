import { afterEach, beforeEach, expect, it } from "vitest";
import { muProcess, tempState } from "./helpers.js";

let state: ReturnType<typeof tempState>;
beforeEach(() => {
  state = tempState();
});
afterEach(() => state.done());

it("refuses a bad MU_LOCK_TIMEOUT_MS on plugin list, the example docs/cli.md gives", () => {
  const r = muProcess(["plugin", "list"], { ...state.env, MU_LOCK_TIMEOUT_MS: "abc" });
  expect(r.stderr).toMatch(/^mu: usage: MU_LOCK_TIMEOUT_MS='abc' is not valid; [^\n]+\n$/);
  expect(r.stdout).toBe("");
  expect(r.code).toBe(2);
});

it.each([
  ["MU_MUX", "screen", /give one of tmux, sim/],
  ["MU_MUX_SIM", "die", /give one of fail-start, dies, no-command-line/],
  ["MU_TRACE_CONTENT", "yes", /give one of 0, 1/],
])("refuses %s=%s in one line, exit 2, on a verb that never reads it", (name, bad, words) => {
  const r = muProcess(["task", "list"], { ...state.env, [name]: bad });
  expect(r.stderr).toMatch(new RegExp(`^mu: usage: ${name}='${bad}' is not valid; [^\\n]+\\n$`));
  expect(r.stderr).toMatch(words);
  expect(r.code).toBe(2);
});

it("warns once of a MU_CRASH_AT that names no crash point, and runs the verb", () => {
  const r = muProcess(["task", "list"], { ...state.env, MU_CRASH_AT: "effect.intent-durabel" });
  expect(r.stderr).toBe(
    "mu: testbed: MU_CRASH_AT='effect.intent-durabel' names no crash point, so mu will never stop there; did you mean 'effect.intent-durable'? (the points are listed in docs/testbed.md)\n",
  );
  expect(r.code).toBe(0);
});

it("says nothing of a MU_CRASH_AT that names a point", () => {
  const r = muProcess(["task", "list"], { ...state.env, MU_CRASH_AT: "store.before-rename" });
  expect(r.stderr).toBe("");
  expect(r.code).toBe(0);
});

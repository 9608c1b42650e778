import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { mu, tempState } from "./helpers.js";

// Looking must not make a state directory or an empty database.
// A later write would then find a directory someone else's umask made, and a
// user who only listed would find files they never asked for.

let state: ReturnType<typeof tempState>;
beforeEach(() => {
  state = tempState();
});
afterEach(() => state.done());

const READS: string[][] = [
  ["plugin", "list"],
  ["plugin", "list", "--json"],
  ["plugin", "schema"],
  ["host", "list"],
  ["host", "list", "--json"],
  ["agent", "list"],
  ["task", "list"],
  ["state"],
  ["state", "--json"],
  ["host", "status", "nowhere"],
  ["agent", "read", "nobody"],
  ["agent", "check", "nobody", "1"],
];

describe("a read-only verb that finds no database", () => {
  it.each(READS.map((a) => [a.join(" "), a] as const))(
    "%s creates nothing",
    async (_name, args) => {
      const dir = join(state.dir, "state");
      const r = await mu(args, { MU_STATE_DIR: dir, HOME: state.dir });
      expect(r.code === 0 || r.code === 3, r.stderr).toBe(true);
      expect(existsSync(dir)).toBe(false);
      expect(readdirSync(state.dir)).toEqual([]);
    },
  );
});

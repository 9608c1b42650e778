import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { collectedRef, fetchedRef, localGitFailed, refPart } from "../host/git/fetch-place.js";

// The refs collected work lives under are made from mu's names, which allow
// what git's ref names do not; and a collect that git refuses on mu's side
// names its cause in the hint.

const valid = (ref: string) => spawnSync("git", ["check-ref-format", ref]).status === 0;

describe("refs for collected work", () => {
  it("stay valid git refs for every name mu accepts, and read as the name", () => {
    for (const name of ["a", "a.b", "a..b", "a...b", "x.lock", "end.", "A_b-9"]) {
      expect(valid(collectedRef("main", name, "job-0123abcd")), name).toBe(true);
      expect(valid(fetchedRef(name)), name).toBe(true);
    }
    expect(refPart("plain.name")).toBe("plain.name");
    expect(collectedRef("ws", "a", "job-1")).toBe("refs/mu/collected/ws/a/job-1");
  });
});

describe("a local git failure's hint", () => {
  it("names a held lock only when git says a lock file exists", () => {
    const lock = localGitFailed(
      "c",
      "pointing r",
      "/repo",
      "fatal: update_ref failed for ref 'refs/mu/x': cannot lock ref 'refs/mu/x': Unable to create '/repo/.git/refs/mu/x.lock': File exists.",
    );
    expect(lock.hint).toMatch(/^another git process in \/repo holds the lock/);
    const inTheWay = localGitFailed(
      "c",
      "pointing r",
      "/repo",
      "fatal: cannot lock ref 'refs/mu/a/b': 'refs/mu/a' exists; cannot create 'refs/mu/a/b'",
    );
    expect(inTheWay.hint).toMatch(/^that is git's own error in \/repo, not the host's/);
    expect(inTheWay.line()).not.toMatch(/plugin/);
  });
});

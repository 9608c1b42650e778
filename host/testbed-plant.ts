// The testbed's planted bugs: each re-introduces, in mu's own code path, a
// bug that was found and fixed, so the explorer can prove it still finds that
// class. Inert unless MU_TESTBED_PLANT names the plant; test/explore.test.ts
// checks the explorer finds and shrinks each one in the list below.
//
// Only the testbed's build holds them. The bundle users run
// (dist/mu/run-verb.cjs) is built with MU_TESTBED_BUILD defined as false
// (scripts/build.mjs): TESTBED_BUILD is then the constant false, every
// `TESTBED_BUILD && planted(...)` folds away with its plant's name, and an
// installed mu has no code that reads MU_TESTBED_PLANT at all. tsc's files,
// which the virtual engine and the explorer import, leave it undefined.

declare const MU_TESTBED_BUILD: boolean | undefined;

/**
 * False in the shipped bundle. Every call of planted() is written
 * `TESTBED_BUILD && planted(...)`: the bundler drops the call only where the
 * constant stands beside it (test/testbed-plant-build.test.ts checks none is left).
 */
export const TESTBED_BUILD: boolean =
  typeof MU_TESTBED_BUILD === "undefined" ? true : MU_TESTBED_BUILD;

export const PLANTS = [
  // A keyed effect resent without its lookup (a second machine or job).
  "resend-without-lookup",
  // A delivery without a msgId (command, abort, answer) resent after a crash.
  "resend-no-msgid",
  // A fresh whose new incarnation is never learned.
  "fresh-keeps-incarnation",
  // A wait that records its settle as the next wait's baseline.
  "wait-uses-settle",
  // host rm of a profile that live agents still need.
  "host-rm-live-agents",
  // A reattach that looks at its new view once, not through the readiness window.
  "reattach-without-window",
  // A commit whose temp file, or whose directory after the rename, is not fsynced (power cut).
  "no-temp-fsync",
  "no-dir-fsync",
  // A delivery's reply taken without its check against the request (wrong msgId).
  "reply-check-skipped",
  // A refusal decided on a read and not checked again in the write that
  // commits: host acquire's check that the name is free, made only before
  // the lock, so two acquires of one name both make a machine.
  "check-outside-lock",
  // host release of a machine that agents, jobs or their effects still call on.
  "release-without-holders",
  // A collect (close, in-life, host fetch) through the checkout's one
  // FETCH_HEAD, taking the commit it names unchecked: a parallel fetch's.
  "shared-fetch-head",
  // forget --abandon sweeping the name's panes after the commit that freed
  // the name: a spawn of it by another mu in between loses its new view.
  "sweep-after-commit",
  // A spawn's tree made over the one at its path without keeping that
  // tree's HEAD, which no ref may name (work committed after its collect).
  "tree-replaced-unkept",
  // A plugin's first stderr line, held past the shown cut, masked as if it
  // were whole: a secret that ran past what mu held keeps its first
  // characters, which a longer secret masked before it pulls into view.
  "cut-masked-whole",
] as const;

export type Plant = (typeof PLANTS)[number];

export function planted(env: Readonly<Record<string, string | undefined>>, plant: Plant): boolean {
  return TESTBED_BUILD && env.MU_TESTBED_PLANT === plant;
}

// Under the real part of `npm run mutate` (stryker.real.config.mjs) Stryker
// names the active mutant in this variable, and mu's instrumented build
// switches it on wherever it sees it. Only the mu processes a scenario starts
// may see it: the runner judges them with mu's own modules (its scan for
// processes left behind reads /proc through host/ports/proc-scan), and a
// judge running the mutant could not see what the mutant did. So the
// variable is taken out of the runner's own environment when this module
// loads, which main.ts makes the first thing it does, and handed only to the
// processes it starts. Outside a mutation run it is unset and nothing changes.
const ACTIVE = "__STRYKER_ACTIVE_MUTANT__";
const id = process.env[ACTIVE];
delete process.env[ACTIVE];

export function mutantEnv(): Record<string, string> {
  return id === undefined ? {} : { [ACTIVE]: id };
}

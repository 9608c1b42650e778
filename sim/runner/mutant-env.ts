// Under `npm run mutate:real` (stryker.real.config.mjs) Stryker names the
// active mutant in this variable, and mu's instrumented build switches it on
// when it sees it. A scenario's mu runs in a clean environment, so the
// runner carries this one variable over; outside a mutation run it is unset
// and nothing changes.
const ACTIVE = "__STRYKER_ACTIVE_MUTANT__";

export function mutantEnv(): Record<string, string> {
  const id = process.env[ACTIVE];
  return id === undefined ? {} : { [ACTIVE]: id };
}

// A mu that runs alone (no other step in the background, none racing it) may
// not refuse on account of another mu at work: a writer a crash or a kill
// left behind is dead, and what it left pending is settled by the rule table
// or reported as unresolved, never as still in someone's hands.

/** What mu says when it takes another mu to be at work right now. */
const AT_WORK = [
  /is being acquired by another mu/,
  /is being spawned by mu pid \d+/,
  /is still in the hands of mu pid \d+/,
  /by another mu (?:meanwhile|before|while|since)/,
  /another mu closed it while this wait ran/,
  /was registered meanwhile/,
  /the database lock \S+ is held by/,
];

export function blamesAnotherMu(stderr: string): string | undefined {
  for (const line of stderr.split("\n"))
    if (AT_WORK.some((re) => re.test(line)))
      return `blames another mu, where none ran beside it: ${line.trim()}`;
  return undefined;
}

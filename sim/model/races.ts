// Two verbs that race on one host, agent or plugin: whichever wins, the
// loser answers what it would have answered coming second, or refuses
// while the winner's effect is in flight (decisions.md, what a verb that
// lost a race answers). Each race names the exit pairs it allows, as
// [first verb's exit, second verb's exit].

const RACES: { verbs: [string, string]; allowed: [number, number][] }[] = [
  // The host goes first (the spawn finds no host), or the agent (rm refuses).
  {
    verbs: ["agent spawn c --host box", "host rm box"],
    allowed: [
      [0, 4],
      [3, 0],
    ],
  },
  // A released machine admits no job; a machine with an agent is not released.
  {
    verbs: ["agent spawn c --host h1", "host release h1"],
    allowed: [
      [0, 4],
      [4, 0],
    ],
  },
  {
    verbs: ["host add box2 --plugin sim2", "plugin rm sim2"],
    allowed: [
      [0, 4],
      [3, 0],
    ],
  },
  {
    verbs: ["host acquire --provider sim2 h3", "plugin rm sim2"],
    allowed: [
      [0, 4],
      [3, 0],
    ],
  },
  // One close ends the agent; the other finds it gone, or changing, or
  // comes between the first's recorded stop and its kill of the view, and
  // finishes that as it would a crashed close's leftover (decisions.md).
  {
    verbs: ["agent close a", "agent close a"],
    allowed: [
      [0, 3],
      [3, 0],
      [0, 4],
      [4, 0],
      [0, 0],
    ],
  },
  // A reattach before the close is closed with it; after, it finds no agent,
  // or, meeting the close half-way, refuses as changed.
  {
    verbs: ["agent reattach a", "agent close a"],
    allowed: [
      [0, 0],
      [3, 0],
      [4, 0],
    ],
  },
  {
    verbs: ["agent send a hello-1", "agent close a"],
    allowed: [
      [0, 0],
      [3, 0],
      [4, 0],
      [0, 4],
    ],
  },
  // One name, one machine: the later acquire finds it taken.
  {
    verbs: ["host acquire --provider sim h1", "host acquire --provider sim h1"],
    allowed: [
      [0, 4],
      [4, 0],
    ],
  },
  // A lost record: a release that commits first ends it and rm then removes
  // the released record, or rm meets its effect in flight and is refused;
  // an rm first leaves the release nothing, at its first read or at its
  // committing one (not found, never taken for an acquire in flight).
  {
    verbs: ["host release h1", "host rm h1"],
    allowed: [
      [0, 0],
      [0, 4],
      [3, 0],
    ],
  },
  // A close finishing what a killed send and a killed close left (a
  // delivery pending, its call naming the host): rm before the close
  // settles it is refused; rm after finds nothing holding the host.
  {
    verbs: ["agent close a", "host rm box"],
    allowed: [
      [0, 0],
      [0, 4],
    ],
  },
  // A machine an agent runs on is never released; the send goes through.
  { verbs: ["host release h1", "agent send a hello-1"], allowed: [[4, 0]] },
  // Two agents' trees collected into one checkout, and a host fetch into it:
  // each fetches into a place of its own, so none is refused for the others.
  { verbs: ["agent close a1", "agent close a2"], allowed: [[0, 0]] },
  { verbs: ["agent close a1", "host fetch wt"], allowed: [[0, 0]] },
  { verbs: ["agent close a2", "host fetch wt"], allowed: [[0, 0]] },
  // One name, one job: the later spawn finds the name taken or its spawn
  // at work. Two that resume one spawn cut short: the one whose takeover
  // commits second finds the record taken over or finished since its read,
  // never finishing it again.
  // A close once the spawn's job runs stops it, and the spawn says another
  // mu closed the agent (4), or had already finished (0); one that comes
  // while the start is in flight is refused, or finds nothing yet (3).
  {
    verbs: ["agent spawn c --host box", "agent close c"],
    allowed: [
      [0, 0],
      [4, 0],
      [0, 3],
      [0, 4],
    ],
  },
  // The abandon frees the name in its commit: a spawn that reads before it
  // finds the name taken; one after spawns it anew.
  {
    verbs: ["agent forget a --abandon", "agent spawn a --host box"],
    allowed: [
      [0, 0],
      [0, 4],
    ],
  },
  {
    verbs: ["agent spawn c --host box", "agent spawn c --host box"],
    allowed: [
      [0, 4],
      [4, 0],
    ],
  },
];

/**
 * The race's verdict once every racing verb ended, or undefined when it ended
 * as allowed. `alone`: a verb's exits judged on the records before the race.
 * The table presumes what its verbs name is there and free to act on; when
 * both are refused alone (not found, 3, or taken, 4: the name a second
 * acquire asks for is already ready), neither writes, so each answers as it
 * would alone.
 */
export function raceDiverges(
  ran: { words: string[]; exit: number | null | undefined }[],
  alone: (words: string[]) => number[] | undefined = () => undefined,
): string | undefined {
  const text = ran.map((r) => r.words.join(" "));
  for (const race of RACES) {
    const x = text.indexOf(race.verbs[0]);
    const y = text.findIndex((t, k) => t === race.verbs[1] && k !== x);
    if (x < 0 || y < 0) continue;
    const pair: [unknown, unknown] = [ran[x]?.exit, ran[y]?.exit];
    // A run killed before it answered has no exit to judge; what it left is
    // in doubt, and later verbs are judged against that.
    if (pair.some((e) => e === null || e === undefined)) continue;
    // Each refused alone (not found, or taken): neither writes, so neither
    // can change the other's answer, and each answers as it would alone.
    const refusals = race.verbs.map((v) => alone(v.split(" ")));
    const [r0, r1] = refusals.map((r) =>
      r?.length === 1 && (r[0] === 3 || r[0] === 4) ? r[0] : undefined,
    );
    const allowed: [number, number][] =
      r0 !== undefined && r1 !== undefined ? [[r0, r1]] : race.allowed;
    if (allowed.some(([a, b]) => a === pair[0] && b === pair[1])) return undefined;
    const ok = allowed.map((p) => p.join("/")).join(", ");
    return `'${race.verbs[0]}' and '${race.verbs[1]}' at once exited ${pair.join("/")}; the model allows ${ok}`;
  }
  return undefined;
}

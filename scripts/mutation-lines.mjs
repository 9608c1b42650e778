// Carrying a mutation run's results across an edit of the file it measured.
// A mutant whose every line is unchanged since its run (by a line diff) keeps
// its result at its new place; one that touches a changed line is stale, and
// its lines, with every line added since, are what a new run must cover
// (`--mutate file:from-to`, Stryker's line ranges). This is Stryker's own
// incremental rule for unchanged code, less its check that the tests covering
// a mutant are unchanged: a scenario edited since may have changed a carried
// result, which only a full run of the file settles.

/** For each line of `before` (1-based), its line in `after`, or 0 where it was changed or removed. */
export function lineMap(before, after) {
  const a = before.split("\n");
  const b = after.split("\n");
  // Longest common subsequence of lines, by dynamic programming: the files
  // measured are at most a few hundred lines.
  const n = a.length;
  const m = b.length;
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const map = new Array(n + 1).fill(0);
  for (let i = 0, j = 0; i < n && j < m; ) {
    if (a[i] === b[j]) {
      map[i + 1] = j + 1;
      i++;
      j++;
    } else if (lcs[i + 1][j] >= lcs[i][j + 1]) i++;
    else j++;
  }
  return map;
}

/** The mutant at its place in the edited file, or undefined when one of its lines changed. */
export function moved(m, map) {
  const { start, end } = m.location;
  const s = map[start.line];
  if (!s) return undefined;
  for (let l = start.line; l <= end.line; l++) if (map[l] !== s + (l - start.line)) return undefined;
  return {
    ...m,
    location: {
      start: { ...start, line: s },
      end: { ...end, line: s + (end.line - start.line) },
    },
  };
}

/**
 * A mutant one of whose lines changed, at its approximate place today: its
 * first and last lines where those are unchanged, else the lines next to the
 * nearest unchanged ones. Its result no longer holds: it counts as stale
 * until a run covers that span again.
 */
function staleAt(m, map, lines) {
  const { start, end } = m.location;
  let from = map[start.line];
  for (let l = start.line - 1; !from && l >= 0; l--) from = l === 0 ? 1 : map[l] && map[l] + 1;
  let to = map[end.line];
  for (let l = end.line + 1; !to && l <= map.length; l++) to = l === map.length ? lines : map[l] && map[l] - 1;
  return {
    ...m,
    status: "Stale",
    location: { start: { ...start, line: from }, end: { ...end, line: Math.max(from, to) } },
  };
}

const placeKey = (m) =>
  `${m.location.start.line}:${m.location.start.column}-${m.location.end.line}:${m.location.end.column}:${m.mutatorName}:${m.replacement}`;
// A stale mutant's columns may have moved: a later mutant of the same kind
// over the same lines is its new measure.
const looseKey = (m) =>
  `${m.location.start.line}-${m.location.end.line}:${m.mutatorName}:${m.replacement}`;

/** `entry`'s mutants brought to `source`: moved where unchanged, stale where not. */
function follow(entry, source) {
  const map = lineMap(entry.source, source);
  const lines = source.split("\n").length;
  return { map, lines, mutants: entry.mutants.map((m) => moved(m, map) ?? staleAt(m, map, lines)) };
}

/**
 * An earlier run's file merged under a later run over some lines
 * (`later.ranges`) of the edited file: the later run's mutants, plus the
 * earlier ones it did not run again, those touching a changed line marked
 * stale.
 */
export function carryInto(earlier, later) {
  const ran = new Set(later.mutants.map(placeKey));
  const ranLoose = new Set(later.mutants.map(looseKey));
  // A stale mutant inside the later run's lines would have been made again
  // had its code still been there.
  const inRun = (m) =>
    (later.ranges ?? []).some(([a, b]) => a <= m.location.start.line && m.location.end.line <= b);
  const kept = follow(earlier, later.source).mutants.filter(
    (m) =>
      !ran.has(placeKey(m)) && !(m.status === "Stale" && (ranLoose.has(looseKey(m)) || inRun(m))),
  );
  const { ranges: _ran, ...rest } = later;
  return { ...rest, mutants: [...later.mutants, ...kept] };
}

/** [from, to] line pairs, sorted and joined where they touch. */
function joined(pairs) {
  const out = [];
  for (const [a, b] of [...pairs].sort((x, y) => x[0] - y[0])) {
    const last = out[out.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else out.push([a, b]);
  }
  return out;
}

/**
 * A merged file brought to today's text: its mutants moved or marked stale,
 * the ranges of lines changed or added since (what a run must cover), and
 * `whole`: those ranges widened to every stale mutant's span, since a mutant
 * that reaches past the changed lines (a function's body emptied, say) is
 * made only by a run over all of it.
 */
export function toCurrent(entry, source) {
  const { map, lines, mutants } = follow(entry, source);
  const image = new Set(map.filter((l) => l > 0));
  const fresh = [];
  for (let l = 1; l <= lines; l++) if (!image.has(l)) fresh.push([l, l]);
  const stale = mutants.filter((m) => m.status === "Stale");
  const spans = stale.map((m) => [m.location.start.line, m.location.end.line]);
  return {
    entry: { ...entry, source, mutants },
    stale: stale.length,
    ranges: joined(fresh),
    whole: joined([...fresh, ...spans]),
  };
}

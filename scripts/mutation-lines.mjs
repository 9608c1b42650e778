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

const placeKey = (m) =>
  `${m.location.start.line}:${m.location.start.column}-${m.location.end.line}:${m.location.end.column}:${m.mutatorName}:${m.replacement}`;

/**
 * An earlier run's file merged under a later run of the edited file: the
 * later run's mutants, plus the earlier mutants on unchanged lines that the
 * later run did not run (a run over some lines only).
 */
export function carryInto(earlier, later) {
  const map = lineMap(earlier.source, later.source);
  const ran = new Set(later.mutants.map(placeKey));
  const kept = earlier.mutants
    .map((m) => moved(m, map))
    .filter((m) => m !== undefined && !ran.has(placeKey(m)));
  return { ...later, mutants: [...later.mutants, ...kept] };
}

/**
 * A merged file brought to today's text: the results that carry over, how
 * many went stale, and the line ranges of today's file a run must cover to
 * measure it whole again (the changed and added lines, widened to the new
 * span of any stale mutant that straddles them).
 */
export function toCurrent(entry, source) {
  const map = lineMap(entry.source, source);
  const lines = source.split("\n").length;
  const image = new Set(map.filter((l) => l > 0));
  const fresh = [];
  for (let l = 1; l <= lines; l++) if (!image.has(l)) fresh.push([l, l]);
  const carried = [];
  let stale = 0;
  for (const m of entry.mutants) {
    const at = moved(m, map);
    if (at) {
      carried.push(at);
      continue;
    }
    stale++;
    // Its span in today's file: from the last unchanged line at or before its
    // start to the first at or after its end (or the file's ends).
    let from = 1;
    for (let l = m.location.start.line; l >= 1; l--)
      if (map[l]) {
        from = map[l];
        break;
      }
    let to = lines;
    for (let l = m.location.end.line; l < map.length; l++)
      if (map[l]) {
        to = map[l];
        break;
      }
    fresh.push([from, to]);
  }
  fresh.sort((x, y) => x[0] - y[0]);
  const ranges = [];
  for (const [a, b] of fresh) {
    const last = ranges[ranges.length - 1];
    if (last && a <= last[1] + 1) last[1] = Math.max(last[1], b);
    else ranges.push([a, b]);
  }
  return { entry: { ...entry, source, mutants: carried }, stale, ranges };
}

// "Did you mean": the known word nearest to one a person typed.

/** Levenshtein distance. */
export function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++)
      cur[j] = Math.min(
        (prev[j] as number) + 1,
        (cur[j - 1] as number) + 1,
        (prev[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
    prev = cur;
  }
  return prev[b.length] as number;
}

/** The nearest of `known` to `word` (ties alphabetical), or undefined when there is none. */
export function closest(word: string, known: Iterable<string>): string | undefined {
  let best: { k: string; d: number } | undefined;
  for (const k of known) {
    const d = distance(word, k);
    if (!best || d < best.d || (d === best.d && k < best.k)) best = { k, d };
  }
  return best?.k;
}

/** One word for POSIX sh, whatever it holds: single quotes, with each ' closed, escaped and reopened. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

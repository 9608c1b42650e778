/** One word for POSIX sh, whatever it holds: single quotes, with each ' closed, escaped and reopened. */
export function shQuote(s: string): string {
  return `'${s.replace(/'/g, `'\\''`)}'`;
}

/** As shQuote, but a word that needs no quotes is left bare, for a hint a person reads. */
export function shWord(s: string): string {
  return /^[A-Za-z0-9._/@%+=:,-]+$/.test(s) ? s : shQuote(s);
}

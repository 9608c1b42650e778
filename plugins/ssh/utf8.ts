/**
 * Output cut at a byte count may end inside a UTF-8 character; decoded as it
 * is, that part becomes U+FFFD. The cut moves back to the character's start.
 */
export function wholeChars(b: Uint8Array): Uint8Array {
  let i = b.length - 1;
  while (i >= 0 && b.length - i <= 4 && ((b[i] ?? 0) & 0xc0) === 0x80) i--;
  if (i < 0 || b.length - i > 4) return b;
  const lead = b[i] ?? 0;
  const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
  return b.length - i < need ? b.subarray(0, i) : b;
}

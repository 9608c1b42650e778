import { UnknownOutcomeError } from "../errors.js";
import type { Intent, IntentRef } from "./journal.js";

// How an intent that stays pending is reported: the row that left it, and,
// when no row can ever resolve it, the verb with which a person ends it.

/**
 * An intent that stays pending. `forGood` when no row of the table can ever
 * resolve it (nothing left to ask or wait for): then only a person, who can
 * look at the machine, can end it (mu agent forget).
 */
export class UnresolvedError extends UnknownOutcomeError {
  constructor(
    readonly intent: IntentRef,
    readonly row: string,
    readonly forGood: boolean,
    message: string,
    hint: string,
  ) {
    super(`effect.${row}`, "effect", message, { hint });
  }
}

export function unresolved(
  i: Intent,
  row: string,
  why: string,
  next: string,
  forget?: string,
): UnresolvedError {
  const message = `${i.method} for ${i.subject} is still unresolved (key ${i.key}; ${row}): ${why}`;
  const hint = forget
    ? `nothing was repeated, and no rule can ever settle it: make sure nothing runs under key ${i.key} on its host, then run '${forget}'`
    : `nothing was repeated; run '${next}' again later`;
  return new UnresolvedError({ id: i.id, key: i.key }, row, forget !== undefined, message, hint);
}

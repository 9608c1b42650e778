import { GRACE_MS } from "../plugin/plugin-process.js";
import { MAX_RETRIES } from "../seams/call.js";

/** How long mu waits on a read (a lookup, a status) and on an effect. */
export const READ_MS = 10_000;
export const EFFECT_MS = 60_000;

/**
 * The longest an effect call can be in the plugin's hands: its deadline plus
 * the grace before mu stops the plugin. A resend counts as inside a dedupe
 * window only when all of this fits before the window closes.
 */
export const EFFECT_SPAN_MS = EFFECT_MS + GRACE_MS;

/**
 * The latest the mu that wrote an intent can still be waiting on it: every
 * attempt's deadline (retryable errors are retried) and the grace after the
 * last. Past it, a writer that still lives is stuck, not busy.
 */
export const WRITER_SPAN_MS = (MAX_RETRIES + 1) * EFFECT_MS + GRACE_MS;

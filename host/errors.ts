// Local errors: what stays inside mu. Each carries a stable code, the exit
// code docs/cli.md documents, a label for the one-line message, and where
// there is one, the next step for the user. Wire errors (JSON-RPC errors
// with data.kind) live with the transport and are mapped to these.

export const EXIT = {
  ok: 0,
  unknownOutcome: 1,
  usage: 2,
  notFound: 3,
  refused: 4,
  unavailable: 5,
  deadline: 7,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

export interface MuErrorOptions {
  hint?: string;
  cause?: unknown;
}

export abstract class MuError extends Error {
  abstract readonly exit: ExitCode;
  readonly hint: string | undefined;

  constructor(
    readonly code: string,
    readonly label: string,
    message: string,
    opts: MuErrorOptions = {},
  ) {
    super(message, opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = new.target.name;
    this.hint = opts.hint;
  }

  /** The one line mu prints: `mu: <label>: <message>[; <hint>]`. */
  line(): string {
    return `mu: ${this.label}: ${this.message}${this.hint ? `; ${this.hint}` : ""}`;
  }
}

/** Bad flags or arguments, or a refusal made before anything was written. */
export class UsageError extends MuError {
  readonly exit = EXIT.usage;
}

/** A named thing (plugin, host, agent, task) does not exist. */
export class NotFoundError extends MuError {
  readonly exit = EXIT.notFound;
}

/** A plugin failed trust, registration or the load rules, or a conflict. */
export class RefusedError extends MuError {
  readonly exit = EXIT.refused;
}

/** The plugin answered with an error, or the substrate (DB, lock) failed. */
export class UnavailableError extends MuError {
  readonly exit = EXIT.unavailable;
}

/** An effect may or may not have happened; the intent stays pending. */
export class UnknownOutcomeError extends MuError {
  readonly exit = EXIT.unknownOutcome;
}

/** `mu wait` fired an urgent deadline event. */
export class DeadlineEvent extends MuError {
  readonly exit = EXIT.deadline;
}

/** Maps anything thrown to the exit code and line a verb ends with. */
export function classify(err: unknown): { exit: ExitCode; line: string } {
  if (err instanceof MuError) return { exit: err.exit, line: err.line() };
  const msg = err instanceof Error ? err.message : String(err);
  // An unclassified error is a bug in mu; say so rather than guess a code.
  return {
    exit: EXIT.unavailable,
    line: `mu: internal: ${firstLine(msg)}; this is a bug in mu, please report it`,
  };
}

export function firstLine(s: string, max = 400): string {
  const nl = s.indexOf("\n");
  const line = nl === -1 ? s : s.slice(0, nl);
  return line.length > max ? line.slice(0, max) : line;
}

/** A spawn on a provider host inside the deadline margin: the host drains. */
export class HostDeadlineError extends RefusedError {}

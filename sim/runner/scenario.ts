// The scenario file format as types; schemas/scenario.schema.json is the
// authority and load.ts validates every file against it before it runs.

import type { WorldConfig } from "../plugin/world.js";

export type Args = string | string[];
export type Signal = "SIGINT" | "SIGTERM" | "SIGHUP";

export interface MuStep {
  mu: Args;
  exit?: number;
  stdout?: string;
  stderr?: string;
  stderrLines?: number;
  env?: Record<string, string>;
  signal?: { send: Signal; afterSeen: string; then?: Signal };
  signalled?: Signal | "SIGKILL";
  background?: true;
  /** A method's arrival at the plugin, or its n-th with `method#n`, before the step starts. */
  afterSeen?: string;
  cwd?: string;
  capture?: Record<string, string>;
  /** What mu reads on stdin: this text, then its end. */
  stdin?: string;
  /** Or this file (placeholders expanded) as mu's stdin, a device such as /dev/zero among them. */
  stdinFile?: string;
  /** mu's stdout is a pipe whose reader has gone before mu starts (`mu state | head -0`). */
  stdoutClosed?: true;
  /** That many one-letter words (`x`) after the step's own: an argv too long to spell out in a file. */
  moreWords?: number;
}

export interface ShStep {
  sh: string;
  exit?: number;
  stdout?: string;
  capture?: Record<string, string>;
}

export interface JoinStep {
  join: true;
}

export interface WorldStep {
  world: Partial<WorldConfig>;
  /** Time that passes first: slept on the real engine, the clock moved on on the virtual one. */
  elapseMs?: number;
}

export interface InstallStep {
  install: {
    as: string;
    mode?: string;
    kind?: "file" | "directory" | "symlink" | "removed";
    /** other: the file belongs to another user (the virtual engine only). */
    owner?: "other";
    /** The file's bytes in place of the launcher's: UTF-8 text, or hex for bytes that are not. */
    text?: string;
    hex?: string;
    /** How many times those bytes follow one another: a big file without a big scenario. */
    repeat?: number;
  };
}

export type LockDamage = "live" | "dead" | "removed";

export interface DamageStep {
  /** One of: the DB file's bytes, or the newest archive segment turned into a directory in its way. */
  damage: {
    db?:
      | "truncate-half"
      | "truncate-odd"
      | "garbage"
      | "zero"
      | "pages"
      | "newer"
      | "older"
      | "version-behind"
      | "foreign"
      | "directory";
    /** The DB file cut to its first this many bytes. */
    dbCut?: number;
    /** Header fields of the DB file set to these values, the rest of its bytes kept. */
    dbHeader?: Partial<
      Record<
        | "pageSize"
        | "changeCounter"
        | "pageCount"
        | "freelistTrunk"
        | "freelistCount"
        | "userVersion"
        | "applicationId"
        | "validFor",
        number
      >
    >;
    /** The DB file replaced by a new SQLite file that this SQL makes; `{mu-schema}` in it stands for mu's tables at its version, unmarked. */
    dbSql?: string;
    /** The note a commit leaves beside the DB (mu.db.checked): deleted, as a restore of the DB alone leaves it, or a directory in its place. */
    checked?: "removed" | "directory";
    /** A regular file where mu's state directory should be, before any mu made it. */
    stateDir?: "file";
    /** The disk left with room for small files only (the virtual engine only). */
    disk?: "full";
    /** Another program's file of this name (no slash) laid beside the DB. */
    beside?: string;
    archive?: "directory";
    /** The DB's lock file as another mu would leave it: held by a live or a dead process, or gone. */
    lock?: LockDamage;
    /** The DB's lock file holding exactly this text, as a holder cut short in its write leaves it. */
    lockText?: string;
    /** The lock's break file (`<lock>.break`), as a mu cut short while breaking a stale lock leaves it. */
    lockBreak?: "live" | "dead" | "unreadable";
  };
}

/**
 * A long history written straight into the DB, as a crew's months of use
 * would leave it: `receipts` settled (accepted) deliveries to `agent` in
 * workstream main, created now, of an agent with no job and no intent.
 */
export interface SeedStep {
  seed: { receipts: number; agent: string };
}

export interface ExpectStep {
  expect: {
    db?: "unchanged";
    leftoverFiles?: "none";
    /** A pattern for the archive beside the DB: each file as `file NAME` and its text, in name order. */
    archive?: string;
    /** How many free pages the DB file holds (SQLite's freelist count): 0 once retention's VACUUM ran. */
    dbFreePages?: number;
    transcript?: { in?: Record<string, number>; out?: Record<string, number> };
    plugins?: string[];
    effects?: Record<string, number>;
    effectsPerKeyAtMost?: Record<string, number>;
    intents?: number;
    hosts?: Record<string, string | null>;
    sameParams?: string[];
    /** Every request of the method the plugin received has params (as JSON) matching the pattern. */
    paramsMatch?: Record<string, string>;
    sessionsPeak?: Record<string, number>;
    cleanExits?: number;
    /** Each commit is reachable from a ref in the repository at `repo` (under the scenario's root). */
    reachable?: { repo: string; commits: string[] };
    /** The traces the steps asked for so far (MU_TRACE_DIR), line by line: each `holds` pattern matches a line, no `lacks` pattern does. */
    trace?: { holds?: string[]; lacks?: string[] };
  };
}

export type Step =
  | MuStep
  | ShStep
  | DamageStep
  | SeedStep
  | ExpectStep
  | WorldStep
  | InstallStep
  | JoinStep;

export interface Scenario {
  scenario: string;
  about: string;
  proves: string[];
  world?: Partial<WorldConfig>;
  env?: Record<string, string>;
  /** Why the file runs on the virtual engine only (hours of waiting). */
  virtualOnly?: string;
  /** The virtual engine's hang guard for one step, in virtual ms. */
  hangAfterMs?: number;
  /**
   * The virtual engine only: the seed of its schedule, which picks the mu
   * invocation that goes on at each disk operation, timer and lock wait.
   * Without it they go on in the order they became ready.
   */
  interleave?: number;
  steps: Step[];
}

export interface LoadedScenario extends Scenario {
  file: string;
}

/** Which of mu's streams a step gives it itself, which only a real mu process has. */
export function ownStdio(step: MuStep): "stdin" | "stdout" | undefined {
  if (step.stdin !== undefined || step.stdinFile !== undefined) return "stdin";
  return step.stdoutClosed ? "stdout" : undefined;
}

export function argv(args: Args): string[] {
  return typeof args === "string" ? args.trim().split(/\s+/) : args;
}

/** A mu step's arguments as mu gets them: its own, then its `moreWords`. */
export function muWords(step: MuStep): string[] {
  const own = argv(step.mu);
  return step.moreWords === undefined
    ? own
    : own.concat(new Array<string>(step.moreWords).fill("x"));
}

export function describeStep(step: Step): string {
  if ("mu" in step)
    return `mu ${argv(step.mu).join(" ")}${step.moreWords === undefined ? "" : ` x … (${step.moreWords} more words)`}`;
  if ("sh" in step) return `sh ${step.sh.split("\n")[0]}`;
  if ("damage" in step) {
    const [key, value] = Object.entries(step.damage)[0] ?? ["db", "zero"];
    const label = key.replace(/[A-Z]/g, (c) => ` ${c.toLowerCase()}`);
    const shown = key === "lockText" || typeof value !== "string" ? JSON.stringify(value) : value;
    return `damage ${label}: ${shown}`;
  }
  if ("world" in step) return `world: ${JSON.stringify(step.world)}`;
  if ("install" in step) return `install ${step.install.as}`;
  if ("seed" in step) return `seed ${step.seed.receipts} receipts of ${step.seed.agent}`;
  if ("join" in step) return "join the background mu";
  // A trace's patterns are long; the failure itself names the one that missed.
  return `expect ${Object.entries(step.expect)
    .map(([k, v]) => (k === "trace" ? "trace" : `${k}: ${JSON.stringify(v)}`))
    .join(", ")}`;
}

/** What `afterSeen` waits for: `method` is its first arrival, `method#n` its n-th. */
export function seenTarget(afterSeen: string): { method: string; n: number } {
  const at = afterSeen.lastIndexOf("#");
  if (at === -1) return { method: afterSeen, n: 1 };
  const n = Number(afterSeen.slice(at + 1));
  // A bad count would wait for an arrival that can never come.
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`afterSeen '${afterSeen}': the count after # must be 1 or more`);
  return { method: afterSeen.slice(0, at), n };
}

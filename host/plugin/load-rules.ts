import type { InitializeResult, KeyCaps, SeamName } from "../protocol/declaration.js";
import { PROTOCOL } from "../protocol/declaration.js";

// The load rules as one pure function: a handshake answer in, the first
// broken rule out. Each rule has a stable id that tests and messages name.

export interface LoadContext {
  /** The name the plugin is registered (or being added) under. */
  name: string;
  /** sha256:<hex> of the schema file this mu ships. */
  digest: string;
  /** Seams the registration or a host needs from this plugin. */
  needs: readonly SeamName[];
  /** What `mu plugin add` recorded, or undefined while adding. */
  recorded?: unknown;
}

export interface Violation {
  rule: string;
  message: string;
  /** The seam a seam.missing names. */
  seam?: string;
}

const exactDedupe = (k: KeyCaps) => k.dedupe?.exact === true;

/** Checks a schema-valid answer; `schemaErrors` are the validator's, if any. */
export function checkLoadRules(
  res: InitializeResult,
  ctx: LoadContext,
  schemaErrors: readonly string[] = [],
): Violation | null {
  // Version first: a plugin from another protocol version may not match our schema at all.
  if (
    typeof res?.protocol === "number" &&
    (res.protocol < PROTOCOL.min || res.protocol > PROTOCOL.max)
  ) {
    return {
      rule: "protocol.range",
      message: `speaks protocol ${res.protocol}; this mu speaks ${PROTOCOL.min}..${PROTOCOL.max}`,
    };
  }
  if (schemaErrors.length > 0) {
    return {
      rule: "declaration.schema",
      message: `its handshake does not match the schema: ${schemaErrors.join("; ")}`,
    };
  }
  if (res.plugin.name !== ctx.name) {
    return {
      rule: "name.mismatch",
      message: `calls itself '${res.plugin.name}', but is registered as '${ctx.name}'`,
    };
  }
  if (res.schema !== ctx.digest) {
    return {
      rule: "schema.digest",
      message: `was built against schema ${res.schema}, not the one this mu ships (${ctx.digest})`,
    };
  }
  const s = res.seams;
  const declared = Object.keys(s) as SeamName[];
  if (declared.length === 0) return { rule: "seams.none", message: "declares no seam" };
  for (const need of ctx.needs) {
    if (!s[need])
      return {
        rule: "seam.missing",
        message: `declares no '${need}' seam, which is needed here`,
        seam: need,
      };
  }
  // A provider needs a link to reach its hosts; one without a job seam loads,
  // and its hosts refuse a spawn up front (docs/decisions.md).
  if (s.host && !s.link)
    return { rule: "host.needs-link", message: "declares 'host' without 'link'" };
  if (s.host && !s.host.acquire.lookup && !exactDedupe(s.host.acquire)) {
    return {
      rule: "key.replayable",
      message:
        "host.acquire declares neither lookup nor exact dedupe, so a lost reply could never be resolved",
    };
  }
  if (s.job?.handle === "reply" && !s.job.start.lookup && !exactDedupe(s.job.start)) {
    return {
      rule: "key.replayable",
      message: "job.start with handle 'reply' declares neither lookup nor exact dedupe",
    };
  }
  if (s.channel) {
    const c = s.channel.caps;
    if (c.watch !== "stream")
      return {
        rule: "channel.watch",
        message: `channel watch is '${String(c.watch)}'; mu needs 'stream'`,
      };
    if (c.settleText === "none")
      return { rule: "channel.settle-text", message: "channel settleText is 'none'" };
    if (c.fence !== "none")
      return {
        rule: "channel.fence",
        message: `channel fence is '${String(c.fence)}'; mu supports only 'none'`,
      };
  }
  if (s.job?.channel !== undefined && s.job.channel !== s.channel?.name) {
    return {
      rule: "job.channel",
      message: `job.channel '${s.job.channel}' is not the channel seam's name${s.channel ? ` '${s.channel.name}'` : " (no channel seam)"}`,
    };
  }
  if (s.job?.firstTurn === "at-start" && s.job.handle !== "reply") {
    return { rule: "job.at-start-handle", message: "firstTurn 'at-start' needs handle 'reply'" };
  }
  if (s.job?.honours?.env === false && !s.job.channel) {
    return { rule: "job.env-channel", message: "honours.env false needs a channel" };
  }
  if (ctx.recorded !== undefined && canonical(ctx.recorded) !== canonical(declarationOf(res))) {
    return {
      rule: "declaration.changed",
      message: "its declaration differs from the one recorded by 'mu plugin add'",
    };
  }
  return null;
}

/**
 * What `plugin add` records and every later start must match: the protocol
 * and the seams. The instance is left out on purpose: a plugin may address
 * another backend later, and that is the instance fence's business, not a
 * load failure. The version is left out so a rebuild with the same seams
 * needs no re-add.
 */
export function declarationOf(res: InitializeResult): {
  protocol: number;
  seams: InitializeResult["seams"];
} {
  return { protocol: res.protocol, seams: res.seams };
}

/** JSON with sorted keys, so key order never counts as a change. */
export function canonical(v: unknown): string {
  return JSON.stringify(v, (_k, val: unknown) =>
    val && typeof val === "object" && !Array.isArray(val)
      ? Object.fromEntries(Object.entries(val as Record<string, unknown>).sort(byCodePoint))
      : val,
  );
}

// Code-point order, not localeCompare: any fixed order will do, and the
// first localeCompare of a process loads ICU's collator (10 to 20 ms of
// every plugin-calling verb).
function byCodePoint([a]: [string, unknown], [b]: [string, unknown]): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

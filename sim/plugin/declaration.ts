// Declaration presets: one binary plays every kind of plugin. A world picks
// a preset and may override any part of it.

const LINK = {
  fetch: true,
  push: true,
  slots: "mu",
  remoteOnTimeout: "stopped",
  quiescence: "provable",
  maxScriptBytes: 131072,
  checks: ["reach"],
};

const CHANNEL = {
  name: "sim",
  caps: {
    fence: "none",
    receipt: "exact",
    dedupe: "exact",
    steer: "queued",
    interrupt: "native",
    fresh: "in-place",
    answer: true,
    command: true,
    watch: "stream",
    settleText: "full",
  },
};

const JOB = {
  kind: "sim",
  view: "detached",
  handle: "pane",
  start: { lookup: true, fenceKey: true, inFlightMs: 30_000 },
  channel: "sim",
  checks: ["agent"],
};

export const PRESETS: Record<string, Record<string, unknown>> = {
  "link-only": { link: LINK },
  "provider-full": {
    link: LINK,
    host: { acquire: { lookup: true, fenceKey: true, inFlightMs: 30_000 } },
    job: JOB,
    channel: CHANNEL,
  },
  "reply-at-start": {
    link: LINK,
    job: {
      ...JOB,
      handle: "reply",
      firstTurn: "at-start",
      start: { lookup: true, fenceKey: true },
    },
    channel: CHANNEL,
  },
  "file-job": { link: LINK, job: { ...JOB, handle: "file" }, channel: CHANNEL },
  "link-job": { link: LINK, job: JOB, channel: CHANNEL },
};

/** Merges b over a; a null in b deletes the key. */
export function merge(a: unknown, b: unknown): unknown {
  if (b === null) return undefined;
  if (
    typeof a !== "object" ||
    a === null ||
    Array.isArray(a) ||
    typeof b !== "object" ||
    Array.isArray(b)
  )
    return b;
  const out: Record<string, unknown> = { ...(a as Record<string, unknown>) };
  for (const [k, v] of Object.entries(b as Record<string, unknown>)) {
    const m = merge(out[k], v);
    if (m === undefined) delete out[k];
    else out[k] = m;
  }
  return out;
}

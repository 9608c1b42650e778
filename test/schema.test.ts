import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  ajvCompiled,
  methodDefs,
  schemaDigest,
  schemaPath,
  seamMethods,
  validate,
  validator,
  validatorsSource,
} from "../host/protocol/schema.js";

// The schema is checked against the spec's own examples (copied here as data)
// and a realistic exchange for every method; then each example is broken in
// the ways a careless plugin would break it, and must fail.

const digest = schemaDigest();
const schemaFile = JSON.parse(readFileSync(schemaPath(), "utf8")) as {
  $defs: Record<string, unknown> & { methods: { properties: Record<string, unknown> } };
};

interface Example {
  name: string;
  def: string;
  value: unknown;
  /** JSON pointers to enum-valued fields inside value. */
  enums?: string[];
  /** An envelope's params or result: opaque to the envelope def, checked by the method's def. */
  payload?: { pointer: string; def: string };
}

const deadline = 1_767_225_600_000;
const linkTarget = { host: { name: "box" } };
const providerHost = { name: "gpu-1", handle: "vm-7f3a", instance: "prod-eu" };
const agentTarget = {
  agent: { workstream: "auth", name: "alice", incarnation: 2 },
  job: { kind: "claude-vm", key: "job-01J9ZK4", handle: "vm-7f3a/job-3" },
  host: providerHost,
};
const call = (target: unknown, rest: Record<string, unknown> = {}) => ({
  target,
  deadline,
  ...rest,
});

const linkSeam = {
  fetch: false,
  slots: "self",
  remoteOnTimeout: "unknown",
  quiescence: "provable",
  maxScriptBytes: 131072,
  checks: ["reach"],
};
const jobSeam = {
  kind: "claude-vm",
  view: "detached",
  handle: "reply",
  start: { lookup: true, fenceKey: true, inFlightMs: 30_000 },
  channel: "vmchan",
  checks: ["agent"],
  firstTurn: "at-start",
  outlivesHost: false,
  honours: { command: true, env: true, sockets: false, roles: ["full-access", "read-only"] },
};
const channelSeam = {
  name: "vmchan",
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
    settleText: "truncated",
  },
};
const allSeams = {
  link: { ...linkSeam, fetch: true, push: true, slots: "mu", checks: ["template", "reach"] },
  job: jobSeam,
  host: { acquire: { lookup: false, fenceKey: false, dedupe: { exact: true, windowMs: 600_000 } } },
  channel: channelSeam,
};

const view = {
  command: "ssh -t gpu-1 tmux attach -t alice",
  env: { TERM: "xterm-256color" },
  cwd: "/srv/work",
};
const observation = {
  status: "idle",
  settled: true,
  since: deadline - 5_000,
  runs: 4,
  incarnation: 2,
  lastText: "Done: the tests pass.",
  lastTextTruncated: false,
};
const exec = { exitCode: 0, stdout: "ok\n", stderr: "", partial: false };
const delivery = { channel: "vmchan", ack: "confirmed", baseline: 3, msgId: "m-01J9ZM" };

// ---- the spec's examples, as data (the schema digest made real)

const specExamples: Example[] = [
  {
    name: "spec: initialize request",
    def: "envelope.request",
    value: {
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocol: { min: 1, max: 1 }, mu: "5" },
    },
    payload: { pointer: "/params", def: "method.initialize.params" },
  },
  {
    name: "spec: initialize params",
    def: "method.initialize.params",
    value: { protocol: { min: 1, max: 1 }, mu: "5" },
  },
  {
    name: "spec: handshake reply",
    def: "envelope.reply",
    value: {
      jsonrpc: "2.0",
      id: 1,
      result: {
        protocol: 1,
        plugin: { name: "box", version: "0.1.0" },
        instance: "prod-eu",
        schema: digest,
        seams: { link: linkSeam },
      },
    },
    payload: { pointer: "/result", def: "method.initialize.result" },
  },
  {
    name: "spec: handshake result",
    def: "method.initialize.result",
    value: {
      protocol: 1,
      plugin: { name: "box", version: "0.1.0" },
      instance: "prod-eu",
      schema: digest,
      seams: { link: linkSeam },
    },
    enums: [
      "/seams/link/slots",
      "/seams/link/remoteOnTimeout",
      "/seams/link/quiescence",
      "/seams/link/checks/0",
    ],
  },
  {
    name: "spec: $/cancel",
    def: "envelope.notification",
    value: { jsonrpc: "2.0", method: "$/cancel", params: { id: 7 } },
    payload: { pointer: "/params", def: "notification.cancel.params" },
  },
  { name: "spec: $/cancel params", def: "notification.cancel.params", value: { id: 7 } },
  { name: "spec: target", def: "target", value: agentTarget },
];

// ---- a realistic exchange per wire method: params, then each result shape

interface Exchange {
  params: unknown;
  results?: unknown[];
  paramEnums?: string[];
  resultEnums?: string[][];
}

const exchanges: Record<string, Exchange> = {
  initialize: {
    params: { protocol: { min: 1, max: 1 }, mu: "5.2.0" },
    results: [
      {
        protocol: 1,
        plugin: { name: "vm", version: "2.3.1" },
        instance: "prod-eu",
        schema: digest,
        seams: allSeams,
      },
    ],
    resultEnums: [
      [
        "/seams/job/view",
        "/seams/job/handle",
        "/seams/job/firstTurn",
        "/seams/job/honours/roles/1",
        "/seams/channel/caps/fence",
        "/seams/channel/caps/receipt",
        "/seams/channel/caps/dedupe",
        "/seams/channel/caps/steer",
        "/seams/channel/caps/interrupt",
        "/seams/channel/caps/fresh",
        "/seams/channel/caps/watch",
        "/seams/channel/caps/settleText",
      ],
    ],
  },
  "link.exec": {
    params: call(linkTarget, {
      script: "git -C repo status --porcelain",
      cwd: ".",
      timeoutMs: 20_000,
    }),
    results: [exec, { exitCode: null, stdout: "partial output", stderr: "", partial: true }],
  },
  "link.fetch": {
    params: call(
      { host: providerHost },
      { remoteCwd: "work/auth-alice", localRepo: "/home/me/src/app", timeoutMs: 20_000 },
    ),
    results: [{ exitCode: 128, stdout: "", stderr: "fatal: not a git repository", partial: false }],
  },
  "link.push": {
    params: call(
      { host: providerHost },
      {
        localRepo: "/home/me/src/app",
        remoteRepo: "repos/app",
        rev: "3f786850e387550fdab836ed7e6dc881de23001b",
        timeoutMs: 60_000,
      },
    ),
    results: [exec],
  },
  "link.checkSteps": {
    params: call(linkTarget, { phase: "reach", root: "repos/app" }),
    results: [
      [
        { step: "ssh", ok: true, detail: "reached box in 41 ms" },
        { step: "disk", ok: "warn", detail: "2 GiB free" },
        { step: "git", ok: null, detail: "skipped: no repo given" },
        { step: "handback", ok: false, detail: "log in to the VPN first" },
      ],
      [],
    ],
    paramEnums: ["/phase"],
    resultEnums: [["/0/ok", "/1/ok"]],
  },
  "host.acquire": {
    params: call(
      { host: { name: "gpu-1" } },
      { key: "host-01J9ZJ", params: { region: "eu-west", size: "large" } },
    ),
    results: [
      { handle: "vm-7f3a", deadlineAt: deadline + 3_600_000, idleReclaimMs: 900_000, maxJobs: 4 },
      { handle: "vm-7f3b" },
    ],
  },
  "host.lookup": {
    params: call({ host: { name: "gpu-1" } }, { key: "host-01J9ZJ", fence: true }),
    results: [
      { found: { handle: "vm-7f3a", maxJobs: 2 } },
      { pending: true },
      { none: true },
      { unknown: "the provider API timed out" },
    ],
  },
  "host.status": {
    params: call({ host: providerHost }),
    results: [
      { state: "up", handle: "vm-7f3a", deadlineAt: deadline + 60_000, idleReclaimMs: null },
      { state: "up", handle: "vm-7f3a" },
      { state: "gone", reason: "reclaimed by the provider" },
      { state: "needs-human", remedy: "top up the account's credit" },
      { state: "unknown", reason: "the provider API answered 503" },
    ],
    resultEnums: [["/state"]],
  },
  "host.release": {
    params: call({ host: providerHost }, { key: "host-01J9ZJ" }),
    results: [null],
  },
  "job.start": {
    params: call(
      {
        agent: agentTarget.agent,
        job: { kind: "claude-vm", key: "job-01J9ZK4" },
        host: providerHost,
      },
      {
        key: "job-01J9ZK4",
        spec: {
          workstream: "auth",
          name: "alice",
          harness: "claude",
          role: "read-only",
          cmd: "claude --model opus",
          commandSource: "command",
          cwd: "/srv/work/auth-alice",
          env: { MU_AGENT: "auth/alice", LANG: "C.UTF-8" },
          sockets: { MU_CTL_SOCK: "/run/user/1000/mu/ctl.sock" },
          firstPrompt: { text: "Read TASK.md and start.", msgId: "m-01J9ZK5" },
        },
      },
    ),
    results: [
      { view, handle: "vm-7f3a/job-3", baseline: { runs: 0, incarnation: 1 } },
      { view: { command: "tmux attach -t alice", env: {} } },
    ],
    paramEnums: ["/spec/role", "/spec/commandSource"],
  },
  "job.lookup": {
    params: call(agentTarget, { key: "job-01J9ZK4", fence: false }),
    results: [
      { found: { handle: "vm-7f3a/job-3", view, baseline: { runs: 0 } } },
      { found: { handle: "/srv/work/auth-alice/.job" } },
      { pending: true },
      { none: true },
      { unknown: "the backend is restarting" },
    ],
  },
  "job.status": {
    params: call(agentTarget),
    results: [
      { state: "running" },
      { state: "ended", exit: 0 },
      { state: "ended", exit: null },
      { state: "lost", reason: "the VM rebooted" },
      { state: "unknown", reason: "no answer from the VM" },
    ],
    resultEnums: [["/state"]],
  },
  "job.stop": { params: call(agentTarget, { key: "job-01J9ZK4" }), results: [null] },
  "job.attach": { params: call(agentTarget), results: [view] },
  "job.checkSteps": {
    params: call({ host: providerHost }, { phase: "agent", agent: "claude" }),
    results: [[{ step: "claude-binary", ok: true, detail: "claude 2.1.0" }]],
    paramEnums: ["/phase"],
  },
  "channel.readStates": {
    params: call(agentTarget, { targets: ["auth/alice"] }),
    results: [
      {
        "auth/alice": {
          state: "blocked",
          since: deadline - 1_000,
          runs: 3,
          incarnation: 2,
          pending: "Allow edits to package.json?",
        },
      },
      {
        "auth/alice": {
          state: "unknown",
          since: deadline,
          runs: 0,
          incarnation: 1,
          reason: "pane not found",
        },
      },
      {},
    ],
    resultEnums: [["/auth~1alice/state"]],
  },
  "channel.baseline": {
    params: call(agentTarget),
    results: [{ runs: 3, incarnation: 2 }, { runs: 0 }, null],
  },
  "channel.receipt": {
    params: call(agentTarget, { msgId: "m-01J9ZM" }),
    results: [
      { state: "accepted", id: "m-01J9ZM", runs: 3, at: deadline - 2_000, incarnation: 2 },
      { state: "accepted", id: "m-01J9ZM" },
      { state: "not-accepted", id: "m-01J9ZM" },
      { state: "unreachable", id: "m-01J9ZM", reason: "the channel restarted" },
    ],
    resultEnums: [["/state"]],
  },
  "channel.lastRun": {
    params: call(agentTarget, { afterRuns: 3, inc: 2 }),
    results: [
      observation,
      { ...observation, status: "busy", settled: false, lastError: "rate limited" },
      null,
    ],
    resultEnums: [["/status"]],
  },
  "channel.watch": {
    params: call(agentTarget, { afterRuns: 3, inc: 2 }),
    results: [
      {
        watchId: "w-17",
        initial: { ...observation, status: "busy", settled: false },
        afterRuns: 3,
      },
      { watchId: "w-18", initial: observation },
    ],
  },
  "channel.send": {
    params: call(agentTarget, {
      text: "Also cover the refresh path.",
      msgId: "m-01J9ZM",
      mode: "followUp",
      force: false,
      firstPrompt: false,
      expectIncarnation: 2,
    }),
    results: [delivery, { channel: "vmchan", ack: "unknown" }],
    paramEnums: ["/mode"],
    resultEnums: [["/ack"]],
  },
  "channel.fresh": {
    params: call(agentTarget, { text: "Start over from TASK.md.", msgId: "m-01J9ZN", force: true }),
    results: [{ ...delivery, msgId: "m-01J9ZN" }],
  },
  "channel.command": {
    params: call(agentTarget, {
      name: "compact",
      instructions: "keep the test plan",
      force: false,
      expectIncarnation: 2,
    }),
    results: [{ channel: "vmchan", ack: "confirmed", baseline: 5 }],
  },
  "channel.interrupt": {
    params: call(agentTarget, {
      text: "Stop: wrong branch.",
      msgId: "m-01J9ZP",
      timeoutMs: 10_000,
    }),
    results: [
      { wasBusy: true, pending: false, runs: 6, msgId: "m-01J9ZP", incarnation: 2 },
      { wasBusy: false, pending: true },
    ],
  },
  "channel.abort": {
    params: call(agentTarget, { timeoutMs: 10_000 }),
    results: [{ before: "busy", after: "idle", settled: true, aborted: true, pending: false }],
    resultEnums: [["/before", "/after"]],
  },
  "channel.answer": {
    params: call(agentTarget, { keys: ["2", "Enter"], force: false }),
    results: [{ keys: ["2", "Enter"], ack: "confirmed" }],
    resultEnums: [["/ack"]],
  },
  shutdown: { params: {} },
  "$/cancel": { params: { watchId: "w-17" } },
  "watch/settled": { params: { watchId: "w-17", observation } },
  "watch/restarted": { params: { watchId: "w-18", incarnation: 3 } },
};

const methodExamples: Example[] = Object.entries(exchanges).flatMap(([method, ex]) => {
  const defs = methodDefs(method);
  if (!defs) throw new Error(`no defs indexed for ${method}`);
  const out: Example[] = [
    { name: `${method} params`, def: defs.params, value: ex.params, enums: ex.paramEnums },
  ];
  (ex.results ?? []).forEach((value, i) => {
    if (!defs.result) throw new Error(`${method} has no result def`);
    out.push({
      name: `${method} result #${i}`,
      def: defs.result,
      value,
      enums: ex.resultEnums?.[i],
    });
  });
  return out;
});

const envelopeExamples: Example[] = [
  {
    name: "reply with null result",
    def: "envelope.reply",
    value: { jsonrpc: "2.0", id: 4, result: null },
  },
  ...(["retryable", "permanent", "unknown-outcome"] as const).map((kind) => ({
    name: `error reply, ${kind}`,
    def: "envelope.errorReply",
    value: {
      jsonrpc: "2.0",
      id: 5,
      error: { code: -32000, message: "backend busy", data: { kind } },
    },
    enums: ["/error/data/kind"],
  })),
  {
    name: "error reply, human",
    def: "envelope.errorReply",
    value: {
      jsonrpc: "2.0",
      id: 6,
      error: {
        code: -32001,
        message: "login expired",
        data: { kind: "human", remedy: "run vm login" },
      },
    },
  },
  {
    name: "plugin notification",
    def: "envelope.fromPlugin",
    value: {
      jsonrpc: "2.0",
      method: "watch/restarted",
      params: { watchId: "w-18", incarnation: 3 },
    },
    payload: { pointer: "/params", def: "notification.watch.restarted.params" },
  },
  {
    name: "plugin reply",
    def: "envelope.fromPlugin",
    value: { jsonrpc: "2.0", id: 9, result: { runs: 1 } },
    payload: { pointer: "/result", def: "method.channel.baseline.result" },
  },
  {
    name: "plugin error",
    def: "envelope.fromPlugin",
    value: {
      jsonrpc: "2.0",
      id: 9,
      error: { code: 1, message: "no", data: { kind: "permanent" } },
    },
  },
  { name: "all four seams", def: "seams", value: allSeams },
];

const examples = [...specExamples, ...methodExamples, ...envelopeExamples];

// ---- mutation helpers

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
const clone = <T>(v: T): T => structuredClone(v);
const isObject = (v: unknown): v is Record<string, Json> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** JSON pointers of every object inside v (not v itself). */
function nestedObjects(v: unknown, at = ""): string[] {
  const out: string[] = [];
  const entries = Array.isArray(v)
    ? v.map((x, i) => [String(i), x] as const)
    : isObject(v)
      ? Object.entries(v)
      : [];
  for (const [k, x] of entries) {
    const p = `${at}/${k.replaceAll("~", "~0").replaceAll("/", "~1")}`;
    if (isObject(x)) out.push(p);
    out.push(...nestedObjects(x, p));
  }
  return out;
}

function resolve(
  root: unknown,
  pointer: string,
): { parent: Record<string, unknown> | unknown[]; key: string } {
  const parts = pointer
    .split("/")
    .slice(1)
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
  let node = root as Record<string, unknown>;
  for (const part of parts.slice(0, -1)) node = node[part] as Record<string, unknown>;
  const key = parts.at(-1);
  if (key === undefined || !(key in node)) throw new Error(`nothing at ${pointer}`);
  return { parent: node, key };
}

function at(root: unknown, pointer: string): unknown {
  if (pointer === "") return root;
  const { parent, key } = resolve(root, pointer);
  return (parent as Record<string, unknown>)[key];
}

function withValue(root: unknown, pointer: string, value: unknown): unknown {
  const copy = clone(root);
  const { parent, key } = resolve(copy, pointer);
  (parent as Record<string, unknown>)[key] = value;
  return copy;
}

const errorsOf = (def: string, value: unknown): string[] => {
  const r = validate(def, value);
  return r.ok ? [] : r.errors;
};

// ---- tests

describe("protocol schema examples", () => {
  it.each(examples.map((e) => [e.name, e] as const))("%s validates", (_name, e) => {
    expect(errorsOf(e.def, e.value)).toEqual([]);
    if (e.payload) expect(errorsOf(e.payload.def, at(e.value, e.payload.pointer))).toEqual([]);
  });

  it.each(examples.filter((e) => isObject(e.value)).map((e) => [e.name, e] as const))(
    "%s: an unknown field at the top fails",
    (_name, e) => {
      const bad = { ...(e.value as object), zzUnknown: true };
      expect(errorsOf(e.def, bad).join("\n")).toMatch(
        /unknown field 'zzUnknown'|must have exactly one of/,
      );
    },
  );

  it.each(examples.map((e) => [e.name, e] as const))(
    "%s: an unknown field in any nested object fails",
    (_name, e) => {
      for (const p of nestedObjects(e.value)) {
        const bad = withValue(e.value, p, { ...(at(e.value, p) as object), zzUnknown: true });
        const { payload } = e;
        const inPayload = payload && (p === payload.pointer || p.startsWith(`${payload.pointer}/`));
        const ok = inPayload
          ? validate(payload.def, at(bad, payload.pointer)).ok
          : validate(e.def, bad).ok;
        expect(ok, `unknown field at ${p}`).toBe(false);
      }
    },
  );

  it.each(examples.filter((e) => e.enums).map((e) => [e.name, e] as const))(
    "%s: a wrong enum value fails",
    (_name, e) => {
      for (const p of e.enums ?? []) {
        const errors = errorsOf(e.def, withValue(e.value, p, "zz-not-a-value"));
        expect(errors.join("\n"), `enum at ${p}`).toMatch(/must be one of/);
      }
    },
  );

  it("covers every method and notification in the index, params and results", () => {
    const covered = new Set(examples.map((e) => e.def));
    for (const method of Object.keys(schemaFile.$defs.methods.properties)) {
      const defs = methodDefs(method);
      expect(defs, method).toBeDefined();
      expect(covered.has(defs?.params ?? ""), `${method} params`).toBe(true);
      if (defs?.result) expect(covered.has(defs.result), `${method} result`).toBe(true);
    }
  });

  it("accepts a whole exchange through the methods index", () => {
    const sample = Object.fromEntries(
      Object.entries(exchanges).map(([m, ex]) => [
        m,
        ex.results ? { params: ex.params, result: ex.results[0] } : { params: ex.params },
      ]),
    );
    expect(errorsOf("methods", sample)).toEqual([]);
    expect(errorsOf("methods", { "link.nope": { params: {} } })).toEqual([
      "/: unknown field 'link.nope'",
    ]);
  });
});

describe("protocol schema rules", () => {
  const handshake = specExamples[3]?.value as Record<string, unknown>;

  it("names the digest of the file's exact bytes", () => {
    const bytes = readFileSync(new URL("../schemas/plugin-protocol-v1.json", import.meta.url));
    expect(digest).toBe(`sha256:${createHash("sha256").update(bytes).digest("hex")}`);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("uses the build's precompiled validators, which agree with ajv's own compile", () => {
    expect(validatorsSource()).toBe("build");
    for (const e of examples) {
      const values = [
        e.value,
        ...(isObject(e.value) ? [{ ...(e.value as object), zzUnknown: true }] : []),
      ];
      for (const v of values) {
        const fresh = ajvCompiled(e.def);
        expect(fresh, e.def).toBeDefined();
        const want = fresh?.(v) ?? false;
        expect(validate(e.def, v).ok, `${e.name} (${e.def})`).toBe(want);
      }
    }
  });

  it("compiles every def under ajv's strict mode", () => {
    for (const name of Object.keys(schemaFile.$defs))
      expect(() => validator(name), name).not.toThrow();
    expect(validator("seams")).toBe(validator("#/$defs/seams"));
    expect(() => validator("no.such.def")).toThrow(/no def 'no.such.def'/);
  });

  it("reports short, readable errors", () => {
    const seams = handshake.seams as { link: Record<string, unknown> };
    const bad = { ...handshake, seams: { link: { ...seams.link, slots: "both", foo: 1 } } };
    expect(errorsOf("method.initialize.result", bad)).toEqual([
      "/seams/link: unknown field 'foo'",
      "/seams/link/slots: must be one of mu, self",
    ]);
  });

  it("refuses a human error without a remedy", () => {
    const human = {
      jsonrpc: "2.0",
      id: 6,
      error: { code: 1, message: "login expired", data: { kind: "human" } },
    };
    expect(errorsOf("envelope.errorReply", human)).toEqual(["/error/data: missing field 'remedy'"]);
    expect(
      validate("envelope.errorData", { kind: "permanent", remedy: "try another region" }).ok,
    ).toBe(true);
    expect(validate("envelope.errorData", { kind: "human", remedy: "" }).ok).toBe(false);
  });

  it("requires result on a reply, and a wire-valid error kind", () => {
    expect(errorsOf("envelope.reply", { jsonrpc: "2.0", id: 4 })).toEqual([
      "/: missing field 'result'",
    ]);
    expect(errorsOf("envelope.fromPlugin", { jsonrpc: "2.0", id: 4 })).toEqual([
      "/: missing field 'result'",
    ]);
    expect(
      validate("envelope.fromPlugin", {
        jsonrpc: "2.0",
        id: 4,
        method: "watch/settled",
        params: {},
      }).ok,
    ).toBe(false);
    expect(
      errorsOf("envelope.fromPlugin", { jsonrpc: "2.0", method: "host.acquire", params: {} }),
    ).toEqual(["/method: must be one of watch/settled, watch/restarted"]);
  });

  it("takes exactly one lookup answer", () => {
    for (const def of ["method.host.lookup.result", "method.job.lookup.result"]) {
      expect(errorsOf(def, { found: { handle: "h" }, none: true })).toEqual([
        "/: must have exactly one of found, pending, none, unknown",
      ]);
      expect(validate(def, { pending: true, unknown: "x" }).ok).toBe(false);
      expect(validate(def, {}).ok).toBe(false);
      expect(validate(def, { none: false }).ok).toBe(false);
    }
    expect(errorsOf("method.host.lookup.result", { found: { handle: 5 } })).toEqual([
      "/found/handle: must be string",
    ]);
  });

  it("requires maxScriptBytes on a link", () => {
    const { maxScriptBytes: _, ...link } = linkSeam;
    expect(errorsOf("seam.link", link)).toEqual(["/: missing field 'maxScriptBytes'"]);
    expect(validate("seam.link", { ...linkSeam, maxScriptBytes: 0 }).ok).toBe(false);
    expect(validate("seam.link", { ...linkSeam, maxScriptBytes: 1.5 }).ok).toBe(false);
  });

  it("checks the handshake's instance and schema digest shape", () => {
    expect(validate("method.initialize.result", { ...handshake, instance: "" }).ok).toBe(false);
    expect(
      validate("method.initialize.result", { ...handshake, instance: "x".repeat(128) }).ok,
    ).toBe(true);
    expect(
      validate("method.initialize.result", { ...handshake, instance: "x".repeat(129) }).ok,
    ).toBe(false);
    expect(validate("method.initialize.result", { ...handshake, schema: "sha256:…" }).ok).toBe(
      false,
    );
    expect(
      validate("method.initialize.result", { ...handshake, schema: digest.toUpperCase() }).ok,
    ).toBe(false);
  });

  it("accepts every documented channel capability value and nothing else", () => {
    const values: Record<string, string[]> = {
      fence: ["none", "incarnation"],
      receipt: ["exact", "none"],
      dedupe: ["exact", "none"],
      steer: ["native", "queued", "none"],
      interrupt: ["native", "emulated", "none"],
      fresh: ["in-place", "respawn", "none"],
      watch: ["stream", "poll", "none"],
      settleText: ["full", "truncated", "none"],
    };
    for (const [cap, allowed] of Object.entries(values)) {
      for (const v of allowed) {
        expect(validate("channel.caps", { ...channelSeam.caps, [cap]: v }).ok, `${cap}: ${v}`).toBe(
          true,
        );
      }
      expect(errorsOf("channel.caps", { ...channelSeam.caps, [cap]: "sometimes" })).toEqual([
        `/${cap}: must be one of ${allowed.join(", ")}`,
      ]);
      const { [cap]: _, ...missing }: Record<string, unknown> = channelSeam.caps;
      expect(errorsOf("channel.caps", missing)).toEqual([`/: missing field '${cap}'`]);
    }
  });

  it("treats honours as all-or-nothing and key dedupe as exact only", () => {
    expect(validate("seam.job", { ...jobSeam, honours: { env: true } }).ok).toBe(false);
    expect(
      validate("seam.job", { ...jobSeam, honours: { ...jobSeam.honours, roles: ["admin"] } }).ok,
    ).toBe(false);
    expect(
      validate("seam.job", { ...jobSeam, honours: { ...jobSeam.honours, roles: [] } }).ok,
    ).toBe(false);
    const { honours: _h, firstTurn: _f, outlivesHost: _o, channel: _c, ...bare } = jobSeam;
    expect(validate("seam.job", bare).ok).toBe(true);
    expect(
      validate("keyCaps", { lookup: false, fenceKey: false, dedupe: { exact: false, windowMs: 1 } })
        .ok,
    ).toBe(false);
    expect(
      validate("keyCaps", { lookup: false, fenceKey: false, dedupe: { exact: true, windowMs: 0 } })
        .ok,
    ).toBe(false);
    expect(validate("keyCaps", { lookup: false, fenceKey: false, inFlightMs: 0 }).ok).toBe(true);
    expect(validate("keyCaps", { lookup: false, fenceKey: false, inFlightMs: -1 }).ok).toBe(false);
  });

  it("lets an up status clear facts with null but never its handle", () => {
    const up = {
      state: "up",
      handle: "vm-7f3a",
      deadlineAt: null,
      idleReclaimMs: null,
      maxJobs: null,
    };
    expect(validate("method.host.status.result", up).ok).toBe(true);
    expect(validate("method.host.status.result", { ...up, handle: null }).ok).toBe(false);
    expect(errorsOf("method.host.status.result", { state: "up" })).toEqual([
      "/: missing field 'handle'",
    ]);
    expect(
      errorsOf("method.host.status.result", { state: "gone", reason: "x", handle: "h" }),
    ).toEqual(["/: unknown field 'handle'"]);
    expect(errorsOf("method.host.status.result", { state: "down" })).toEqual([
      "/state: must be one of up, gone, needs-human, unknown",
    ]);
    // Acquire's own facts are never null.
    expect(validate("method.host.acquire.result", { handle: "h", maxJobs: null }).ok).toBe(false);
  });

  it("takes a $/cancel for exactly one of id or watchId", () => {
    expect(errorsOf("notification.cancel.params", { id: 3, watchId: "w" })).toEqual([
      "/: must have exactly one of id, watchId",
    ]);
    expect(validate("notification.cancel.params", {}).ok).toBe(false);
  });

  it("requires target and deadline on every call but the handshake", () => {
    for (const [method, ex] of Object.entries(exchanges)) {
      if (!isObject(ex.params) || !("target" in ex.params)) continue;
      const def = methodDefs(method)?.params ?? "";
      const { target: _t, ...noTarget } = ex.params;
      const { deadline: _d, ...noDeadline } = ex.params;
      expect(errorsOf(def, noTarget), method).toContain("/: missing field 'target'");
      expect(errorsOf(def, noDeadline), method).toContain("/: missing field 'deadline'");
    }
    expect(validate("target", { agent: agentTarget.agent }).ok).toBe(false);
  });

  it("keeps nullable results strict when they are objects", () => {
    expect(errorsOf("method.channel.baseline.result", { runs: 1, extra: 2 })).toEqual([
      "/: unknown field 'extra'",
    ]);
    expect(errorsOf("method.channel.lastRun.result", "idle")).toEqual([
      "/: must be object or null",
    ]);
    expect(validate("method.host.release.result", {}).ok).toBe(false);
  });
});

describe("the error text of each kind of mismatch", () => {
  it("says which constant, which field name and which values a field takes", () => {
    expect(
      errorsOf("envelope.request", { jsonrpc: "1.0", id: 1, method: "initialize", params: {} }),
    ).toEqual(["/jsonrpc: must be 2.0"]);
    expect(
      errorsOf("keyCaps", {
        lookup: false,
        fenceKey: false,
        dedupe: { exact: false, windowMs: 1 },
      }),
    ).toEqual(["/dedupe/exact: must be true"]);
    expect(errorsOf("envMap", { "1BAD": "x", GOOD: "y" })).toEqual([
      "/: field name '1BAD' is not allowed",
    ]);
    expect(errorsOf("checkStep", { step: "x", ok: "yes", detail: "d" })).toEqual([
      "/ok: must be one of true, false, null, warn",
    ]);
  });

  it("falls back to ajv's own words for the other keywords", () => {
    expect(errorsOf("envelope.errorData", { kind: "permanent", remedy: "" })).toEqual([
      "/remedy: must NOT have fewer than 1 characters",
    ]);
    expect(errorsOf("deadline", -1)).toEqual(["/: must be >= 0"]);
  });

  it("keeps a failed union's branch errors out, but not an error beside the union", () => {
    expect(errorsOf("method.host.lookup.result", { found: { handle: 5 }, none: true })).toEqual([
      "/: must have exactly one of found, pending, none, unknown",
      "/found/handle: must be string",
    ]);
    expect(errorsOf("notification.cancel.params", { id: 1, watchId: "w", zz: 2 })).toEqual([
      "/: must have exactly one of id, watchId",
      "/: unknown field 'zz'",
    ]);
    expect(errorsOf("method.host.lookup.result", { pending: false })).toEqual([
      "/pending: must be true",
    ]);
    expect(
      errorsOf("seam.link", { ...linkSeam, slots: "both", checks: ["reach", "reach"] }),
    ).toEqual([
      "/slots: must be one of mu, self",
      "/checks: must NOT have duplicate items (items ## 0 and 1 are identical)",
    ]);
  });
});

describe("the methods index", () => {
  it("lists a seam's methods by their prefix, whole", () => {
    expect(seamMethods("link")).toEqual([
      "link.exec",
      "link.fetch",
      "link.push",
      "link.checkSteps",
    ]);
    expect(seamMethods("li")).toEqual([]);
    expect(seamMethods("job").every((m) => m.startsWith("job."))).toBe(true);
  });

  it("gives a notification's params and no result, and nothing for a name it lacks", () => {
    expect(Object.keys(methodDefs("$/cancel") ?? {})).toEqual(["params"]);
    expect(methodDefs("toString")).toBeUndefined();
    expect(methodDefs("link.nope")).toBeUndefined();
  });
});

import type { Io } from "../cli/io.js";
import { printJson } from "../cli/io.js";
import { deleteIntent, type Intent, intentsFor } from "../effects/journal.js";
import {
  acquiredFacts,
  EFFECT_MS,
  type HostAcquired,
  READ_MS,
  resolveHost,
} from "../effects/resolve-host.js";
import { runEffect } from "../effects/run-effect.js";
import { NotFoundError, RefusedError, UnavailableError, UsageError } from "../errors.js";
import { findLinkHost, sameInstance } from "../hosts/link-host.js";
import { identity, listProfiles } from "../hosts/profiles.js";
import {
  deleteHost,
  getHost,
  type HostRecord,
  listHosts,
  patchFacts,
  putHost,
} from "../hosts/records.js";
import { jobPlugin, jobTarget, stopJob } from "../jobs/job-calls.js";
import { recordStopped } from "../jobs/job-rules.js";
import { agentOf, agentSubject, type JobRecord, jobsOnHost, putJob } from "../jobs/records.js";
import { checkName } from "../names.js";
import { getPlugin } from "../plugin/registry.js";
import type { Registration, Supervisor } from "../plugin/supervisor.js";
import { callPlugin } from "../seams/call.js";
import { openStore, type Store } from "../store/index.js";
import { muxFor } from "../view/mux.js";
import { withPlugins } from "./with-plugins.js";

// Provider hosts: machines a plugin acquires and releases. Every verb on a
// host first resolves what is still pending on it.

const subject = (name: string) => `host:${name}`;

function parseParams(pairs: string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const p of pairs) {
    const eq = p.indexOf("=");
    if (eq <= 0)
      throw new UsageError("host.param", "usage", `--param '${p}' is not k=v`, {
        hint: "write --param region=eu",
      });
    out[p.slice(0, eq)] = p.slice(eq + 1);
  }
  return out;
}

async function registration(store: Store, plugin: string): Promise<Registration> {
  const rec = await store.read((db) => getPlugin(db, plugin));
  if (!rec)
    throw new NotFoundError("plugin.unknown", "plugin", `no plugin named '${plugin}'`, {
      hint: "see: mu plugin list",
    });
  return { name: rec.name, argv: rec.argv, declaration: rec.declaration };
}

async function hostOf(store: Store, name: string): Promise<HostRecord> {
  const h = await store.read((db) => getHost(db, name));
  if (!h)
    throw new NotFoundError("host.unknown", "host", `no host named '${name}'`, {
      hint: "see: mu host list",
    });
  return h;
}

/** Calls that name a recorded host go only to the instance it was recorded under. */
async function fenced(sup: Supervisor, reg: Registration, h: HostRecord) {
  const ready = await sup.ready(reg, ["host"]);
  sameInstance(h.name, reg.name, h.instance, ready.hello.instance);
  return ready;
}

const target = (h: Pick<HostRecord, "name" | "handle" | "instance">) => ({
  host: { name: h.name, ...(h.handle ? { handle: h.handle } : {}), instance: h.instance },
});

export async function hostAcquire(
  io: Io,
  name: string,
  opts: { provider: string; param?: string[] },
): Promise<void> {
  checkName("host name", name, "host.name");
  const params = parseParams(opts.param ?? []);
  const store = openStore(io.ports);
  const reg = await registration(store, opts.provider);
  await withPlugins(io, async (sup) => {
    await resolveHost(io, store, sup, name, `mu host acquire --provider ${opts.provider} ${name}`);
    const existing = await store.read((db) => getHost(db, name));
    if (existing && (existing.state === "ready" || existing.state === "acquiring")) {
      throw new RefusedError(
        "host.exists",
        "host",
        `host '${name}' is already acquired (${existing.state})`,
        {
          hint: `release it first: mu host release ${name}`,
        },
      );
    }
    const { hello } = await sup.ready(reg, ["host", "link"]);
    const key = `${name}-${io.ports.random.hex(6)}`;
    const now = io.ports.clock.now();
    const result = (await runEffect(
      { ports: io.ports, store, sup, reg },
      {
        subject: subject(name),
        method: "host.acquire",
        key,
        params: { target: { host: { name } }, key, params },
        timeoutMs: EFFECT_MS,
        before: (db) =>
          putHost(db, {
            name,
            plugin: reg.name,
            instance: hello.instance,
            key,
            params,
            handle: null,
            state: "acquiring",
            facts: {},
            createdAt: now,
            updatedAt: now,
          }),
        done: (db, r) => {
          const got = r as HostAcquired;
          const h = getHost(db, name);
          if (h)
            putHost(db, {
              ...h,
              handle: got.handle,
              state: "ready",
              facts: acquiredFacts(got),
              updatedAt: io.ports.clock.now(),
            });
        },
        failed: (db) => deleteHost(db, name),
      },
      `mu host status ${name}`,
    )) as HostAcquired;
    io.out(`acquired ${name}: ${result.handle} (plugin ${reg.name}, instance ${hello.instance})\n`);
  });
}

export async function hostRelease(io: Io, name: string): Promise<void> {
  const store = openStore(io.ports);
  const h0 = await hostOf(store, name);
  const reg = await registration(store, h0.plugin);
  await withPlugins(io, async (sup) => {
    await resolveHost(io, store, sup, name, `mu host release ${name}`);
    const h = await hostOf(store, name);
    if (h.state === "released") {
      io.out(`${name} is already released\n`);
      return;
    }
    await fenced(sup, reg, h);
    await runEffect(
      { ports: io.ports, store, sup, reg },
      {
        subject: subject(name),
        method: "host.release",
        key: h.key,
        params: { target: target(h), key: h.key },
        timeoutMs: EFFECT_MS,
        done: (db) => {
          const cur = getHost(db, name);
          if (cur) putHost(db, { ...cur, state: "released", updatedAt: io.ports.clock.now() });
        },
      },
      `mu host release ${name}`,
    );
    io.out(`released ${name}\n`);
  });
}

type Status =
  | ({ state: "up"; handle: string } & Record<string, unknown>)
  | { state: "gone"; reason: string }
  | { state: "needs-human"; remedy: string }
  | { state: "unknown"; reason: string };

export async function hostStatus(io: Io, name: string, opts: { json?: boolean }): Promise<void> {
  const store = openStore(io.ports);
  const h0 = await hostOf(store, name);
  const reg = await registration(store, h0.plugin);
  await withPlugins(io, async (sup) => {
    await resolveHost(io, store, sup, name, `mu host status ${name}`);
    const h = await hostOf(store, name);
    if (h.state === "released" || h.state === "lost") {
      report(io, opts, h, undefined);
      // An outliving job whose stop failed before is stopped now.
      const left = await store.read((db) =>
        jobsOnHost(db, name).filter((j) => j.state === "running"),
      );
      await stopOutliving(io, store, sup, name, left);
      return;
    }
    const { hello } = await fenced(sup, reg, h);
    const outlives = hello.seams.job?.outlivesHost === true;
    const outliving: JobRecord[] = [];
    const settled: Intent[] = [];
    const views: string[] = [];
    const mux = () => muxFor(io.ports);
    const s = (await callPlugin(sup, io.ports.clock, reg, {
      method: "host.status",
      params: { target: target(h) },
      timeoutMs: READ_MS,
      effect: false,
    })) as Status;
    const updated = await store.write((db) => {
      const cur = getHost(db, name);
      if (!cur) return undefined;
      const now = io.ports.clock.now();
      if (s.state === "up") {
        const { state: _s, handle, ...patch } = s;
        putHost(db, {
          ...cur,
          handle,
          state: "ready",
          facts: patchFacts(cur.facts, patch),
          updatedAt: now,
        });
      } else if (s.state === "gone") {
        // gone is a proof: the machine and what ran on it no longer exist,
        // its jobs with it, except a kind that outlives its host: that one
        // still gets its job.stop, below.
        putHost(db, { ...cur, state: "lost", updatedAt: now });
        for (const j of jobsOnHost(db, name)) {
          // The trees went with the machine: no collect can be owed any more.
          putJob(db, { ...j, owesCollect: false, updatedAt: now });
          if (outlives && j.state === "running") {
            outliving.push(j);
            continue;
          }
          const pane = agentOf(db, j.workstream, j.agent)?.pane;
          if (pane) views.push(pane);
          // What was pending on the agent was about a job that no longer exists.
          for (const i of intentsFor(db, agentSubject(j.workstream, j.agent))) {
            deleteIntent(db, i.id);
            settled.push(i);
          }
          recordStopped(db, j.key);
        }
      }
      return getHost(db, name);
    });
    for (const pane of views) await mux().kill(pane);
    for (const i of settled) {
      io.err(`mu: journal: ${i.method} for ${i.subject} (key ${i.key}): host.gone\n`);
    }
    if (updated) report(io, opts, updated, s);
    await stopOutliving(io, store, sup, name, outliving);
    if (s.state === "needs-human") {
      throw new UnavailableError("host.needs-human", "host", `host '${name}' needs a person`, {
        hint: s.remedy,
      });
    }
  });
}

/**
 * The jobs of a kind that outlives its host still run somewhere: each gets its
 * job.stop. One that fails keeps its record, so mu state lists it and the
 * next host status (or its close) tries again; the others are still tried.
 */
async function stopOutliving(
  io: Io,
  store: Store,
  sup: Supervisor,
  name: string,
  jobs: JobRecord[],
): Promise<void> {
  let failure: unknown;
  for (const j of jobs) {
    try {
      const lh = await store.read((db) => findLinkHost(db, name));
      const a = await store.read((db) => agentOf(db, j.workstream, j.agent));
      await jobPlugin(sup, lh, j);
      await stopJob(io, store, sup, lh, j, jobTarget(lh, j, a?.incarnation ?? 1));
      if (a?.pane) await muxFor(io.ports).kill(a.pane);
      io.out(`stopped ${j.workstream}/${j.agent}, whose job outlives its host\n`);
    } catch (err) {
      failure ??= err;
    }
  }
  if (failure !== undefined) throw failure;
}

function report(io: Io, opts: { json?: boolean }, h: HostRecord, s: Status | undefined): void {
  if (opts.json) {
    printJson(io, { ...h, status: s ?? null });
    return;
  }
  const why = s && "reason" in s ? ` (${s.reason})` : "";
  io.out(`${h.name}\t${h.state}${why}\t${h.handle ?? "-"}\t${JSON.stringify(h.facts)}\n`);
}

export async function hostList(io: Io, opts: { json?: boolean }): Promise<void> {
  const { hosts, profiles } = await openStore(io.ports).read((db) => ({
    hosts: listHosts(db),
    profiles: listProfiles(db),
  }));
  if (opts.json) {
    printJson(io, [
      ...profiles.map((p) => ({ kind: "profile", state: "ready", identity: identity(p), ...p })),
      ...hosts.map((h) => ({ kind: "provider", ...h })),
    ]);
    return;
  }
  for (const p of profiles) io.out(`${p.name}\tprofile\t${identity(p)}\n`);
  if (hosts.length === 0 && profiles.length === 0) {
    io.out(
      "no hosts; add one with: mu host add <name> --plugin <plugin>, or acquire one with: mu host acquire --provider <plugin> <name>\n",
    );
    return;
  }
  for (const h of hosts)
    io.out(`${h.name}\t${h.state}\t${h.plugin}:${h.instance}\t${h.handle ?? "-"}\n`);
}

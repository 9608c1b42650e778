import type { Io } from "../cli/io.js";
import { printJson } from "../cli/io.js";
import { deleteIntent, type Intent, intentsFor } from "../effects/journal.js";
import { READ_MS, resolveHost } from "../effects/resolve-host.js";
import { UnavailableError } from "../errors.js";
import { findLinkHost, sameInstance } from "../hosts/link-host.js";
import { identity, listProfiles } from "../hosts/profiles.js";
import { getHost, type HostRecord, listHosts, patchFacts, putHost } from "../hosts/records.js";
import { forgetLeftView, jobPlugin, jobTarget, resolveAgent, stopJob } from "../jobs/job-calls.js";
import { recordStopped } from "../jobs/job-rules.js";
import {
  agentOf,
  agentSubject,
  type JobRecord,
  jobByKey,
  jobsOnHost,
  putJob,
} from "../jobs/records.js";
import { dropTreesOn } from "../jobs/trees-left.js";
import type { Supervisor } from "../plugin/supervisor.js";
import { callPlugin } from "../seams/call.js";
import { openStore, type Store } from "../store/index.js";
import { muxFor } from "../view/mux.js";
import { fenced, hostOf, registration, target } from "./provider-calls.js";
import { withPlugins } from "./with-plugins.js";

// mu host status and mu host list. A status patches the host's facts from
// its provider; a host reported gone takes its jobs and their trees with
// it, except a kind that outlives its host, which still gets its job.stop.

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
        jobsOnHost(db, name).filter((j) => j.state !== "stopped"),
      );
      await stopOutliving(io, store, sup, name, left);
      return;
    }
    const { hello } = await fenced(sup, reg, h);
    const outlives = hello.seams.job?.outlivesHost === true;
    const outliving: JobRecord[] = [];
    const settled: Intent[] = [];
    // Agents whose rows still name a view: killed once the commit is in.
    const views: JobRecord[] = [];
    // A retry may meet a restarted plugin: it too must answer as the host's instance.
    const toInstance = {
      ...reg,
      fence: (now: string) => sameInstance(name, reg.name, h.instance, now),
    };
    const s = (await callPlugin(sup, io.ports.clock, toInstance, {
      method: "host.status",
      params: { target: target(h) },
      timeoutMs: READ_MS,
      effect: false,
    })) as Status;
    const updated = await store.write((db) => {
      const cur = getHost(db, name);
      if (!cur) return undefined;
      // The reply is about the record as read before the call: one another
      // mu released, found lost or acquired again since keeps what it has
      // now, or a stale "up" would make a released machine ready again.
      if (cur.key !== h.key || cur.state !== h.state) return cur;
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
        // So did the trees closes left there: nothing is left to remove.
        dropTreesOn(db, name);
        for (const j of jobsOnHost(db, name)) {
          // The trees went with the machine: no collect can be owed any more.
          putJob(db, { ...j, owesCollect: false, updatedAt: now });
          // A start still pending may have made such a job, too: it is
          // settled by the rules, and what it made stopped, below.
          if (outlives && j.state !== "stopped") {
            outliving.push(j);
            continue;
          }
          if (agentOf(db, j.workstream, j.agent)?.pane) views.push(j);
          // What was pending on the agent was about a job that no longer exists.
          for (const i of intentsFor(db, agentSubject(j.workstream, j.agent))) {
            deleteIntent(db, i);
            settled.push(i);
          }
          recordStopped(db, j.key);
        }
      }
      return getHost(db, name);
    });
    for (const j of views) await forgetLeftView(io, store, j.workstream, j.agent);
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
      // An earlier stop of this job may be pending (an unknown outcome): the
      // rules settle it first, as any verb on the agent would. A new stop
      // beside it would leave it pending for good, naming a close that can
      // only answer "no agent" once this stop has ended the job.
      // Read first: a settled stop clears the agent's pane from its record.
      const a = await store.read((db) => agentOf(db, j.workstream, j.agent));
      await resolveAgent(io, store, sup, j.workstream, j.agent, `mu host status ${name}`);
      const still = await store.read((db) => jobByKey(db, j.key));
      if (still?.state === "running") {
        const lh = await store.read((db) => findLinkHost(db, name));
        await jobPlugin(sup, lh, j);
        await stopJob(io, store, sup, lh, j, jobTarget(lh, j, a?.incarnation ?? 1));
      }
      if (a?.pane) await muxFor(io.ports).kill(a.pane);
      await forgetLeftView(io, store, j.workstream, j.agent);
      // A pending start the rules rolled back made no job: nothing was stopped.
      if (still === undefined && j.state === "starting") continue;
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
  // Labelled, so an empty record reads as "none" rather than a bare {}.
  const facts = Object.keys(h.facts).length === 0 ? "none" : JSON.stringify(h.facts);
  io.out(`${h.name}\t${h.state}${why}\t${h.handle ?? "-"}\tfacts: ${facts}\n`);
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

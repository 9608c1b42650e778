import type { Database } from "sql.js";
import type { Io } from "../cli/io.js";
import { type Witness, witnessOf } from "../effects/forgettable.js";
import {
  acquiredFacts,
  EFFECT_MS,
  type HostAcquired,
  resolveHost,
} from "../effects/resolve-host.js";
import { runEffect } from "../effects/run-effect.js";
import { NotFoundError, RefusedError, UsageError } from "../errors.js";
import { pluginStill } from "../hosts/guards.js";
import { freeingHint, heldBy, recordHolders, waitHint } from "../hosts/holders.js";
import { deleteHost, getHost, putHost } from "../hosts/records.js";
import { checkName } from "../names.js";
import { openStore } from "../store/index.js";
import { planted, TESTBED_BUILD } from "../testbed-plant.js";
import { fenced, hostOf, registration, target } from "./provider-calls.js";
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

/**
 * A name that holds a machine, or one being acquired, takes no second
 * acquire; nor does a released record that something still names: its
 * agents' calls would go to the new machine's handle.
 */
function refuseIfHeld(db: Database, name: string, w: Witness): void {
  const existing = getHost(db, name);
  if (!existing) return;
  if (existing.state === "ready" || existing.state === "acquiring") {
    throw new RefusedError(
      "host.exists",
      "host",
      `host '${existing.name}' is already acquired (${existing.state})`,
      { hint: `release it first: mu host release ${existing.name}` },
    );
  }
  const holders = recordHolders(db, name, true, w);
  if (holders.length > 0) {
    throw new RefusedError(
      "host.acquire.held",
      "host",
      `host '${name}' is ${existing.state}, but its record is still named by ${holders.map((h) => h.what).join(", ")}; nothing was acquired`,
      {
        hint:
          waitHint(holders, "the acquire")?.concat(", or acquire under another name") ??
          freeingHint(holders, false, "free it first, or acquire under another name"),
      },
    );
  }
}

/**
 * What keeps a machine from being released: whatever still calls on it
 * (agents, jobs, their pending effects), each with the verb that frees it.
 */
function refuseIfInUse(db: Database, name: string, w: Witness, env: Io["ports"]["env"]): void {
  if (TESTBED_BUILD && planted(env, "release-without-holders")) return;
  const holders = recordHolders(db, name, false, w);
  if (holders.length > 0) {
    throw new RefusedError(
      "host.release.in-use",
      "host",
      `host '${name}' ${heldBy(holders)}; nothing was released`,
      { hint: waitHint(holders, `mu host release ${name}`) ?? freeingHint(holders, true) },
    );
  }
}

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
    await store.read((db) => refuseIfHeld(db, name, witnessOf(io.ports)));
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
        before: (db) => {
          // Again under the write lock: another mu may have begun acquiring
          // the name since the read above, and both would make a machine;
          // or spawned on the released record, which must then stay its.
          if (!(TESTBED_BUILD && planted(io.ports.env, "check-outside-lock")))
            refuseIfHeld(db, name, witnessOf(io.ports));
          pluginStill(reg.name, ["host", "link"])(db);
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
          });
        },
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

function beingAcquired(name: string): RefusedError {
  return new RefusedError(
    "host.acquiring",
    "host",
    `host '${name}' is being acquired by another mu, its call to the plugin still in flight`,
    { hint: `run mu host status ${name} once that acquire is done, then release it` },
  );
}

// The record this release read is gone: another mu ran host rm (or forget)
// in between. Nothing is left for the release to act on.
function removedMeanwhile(name: string): NotFoundError {
  return new NotFoundError(
    "host.unknown",
    "host",
    `host '${name}' was removed by another mu while this release waited for its plugin; nothing was released`,
    { hint: "see: mu host list" },
  );
}

// Released and acquired again by others (or being acquired, the call still
// in flight): the record now names a new machine that this release never
// read, and is not its to give back.
function acquiredAgain(name: string, inFlight: boolean): RefusedError {
  const what = inFlight
    ? "is being acquired again by another mu while this release waited for its plugin; nothing was released"
    : "acquired again by another mu while this release waited for its plugin; the new machine was not released";
  return new RefusedError("host.changed", "host", `host '${name}' was released and ${what}`, {
    hint: `see mu host status ${name}; release it again only if it is yours to give back`,
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
    // Pending acquires were settled just now, so one still pending is in
    // another mu's hands, its call in flight: releasing the name now would
    // release nothing, and the machine it then makes would be no one's.
    if (h.state === "acquiring") throw beingAcquired(name);
    await store.read((db) => refuseIfInUse(db, name, witnessOf(io.ports), io.ports.env));
    await fenced(sup, reg, h);
    await runEffect(
      { ports: io.ports, store, sup, reg },
      {
        subject: subject(name),
        method: "host.release",
        key: h.key,
        params: { target: target(h), key: h.key },
        timeoutMs: EFFECT_MS,
        // Again under the write lock: an acquire may have begun since the
        // read, or a spawn or a send on the machine.
        before: (db) => {
          const cur = getHost(db, name);
          if (!cur) throw removedMeanwhile(name);
          if (cur.key !== h.key) throw acquiredAgain(name, cur.state === "acquiring");
          if (cur.state === "acquiring") throw beingAcquired(name);
          refuseIfInUse(db, name, witnessOf(io.ports), io.ports.env);
        },
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

export { hostList, hostStatus } from "./host-status.js";

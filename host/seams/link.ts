import type { Io } from "../cli/io.js";
import { firstLine, RefusedError, UnavailableError, UsageError } from "../errors.js";
import {
  bringIn,
  closeFetchPlace,
  fetchedTip,
  openFetchPlace,
  pinRef,
} from "../git/fetch-place.js";
import { checkoutOf, fillTemplate, runTemplate } from "../git/local.js";
import { findLinkHost, type LinkHost, sameInstance } from "../hosts/link-host.js";
import { identity, listProfiles } from "../hosts/profiles.js";
import { machineBound, withSlot } from "../hosts/slots.js";
import { GRACE_MS } from "../plugin/plugin-process.js";
import { type Registration, type Supervisor, seamHint } from "../plugin/supervisor.js";
import type { LinkSeam } from "../protocol/declaration.js";
import { shQuote as q, shWord } from "../sh-quote.js";
import { openStore } from "../store/index.js";
import { planted, TESTBED_BUILD } from "../testbed-plant.js";
import { callPlugin } from "./call.js";

// The link's calls as mu makes them: each holds one of the host's slots when
// the link leaves slots to mu, waits out a "stopping" link's grace before it
// returns a timed-out run, and checks git's own answer where the plugin's
// word is not enough (FETCH_HEAD after a fetch; push.ts, rev-parse after a push).

export const DEFAULT_LINK_TIMEOUT_MS = 20_000;

export interface RunResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  partial: boolean;
}

export interface OpenLink {
  io: Io;
  sup: Supervisor;
  host: LinkHost;
  /** The host's name as the user knows it. */
  name: string;
  link: LinkSeam;
}

/** The host by name, refused unless a provider's machine is ready. */
export async function loadLinkHost(io: Io, name: string): Promise<LinkHost> {
  const h = await openStore(io.ports).read((db) => findLinkHost(db, name));
  if (h.provider && h.provider.state !== "ready") {
    throw new RefusedError("host.not-ready", "host", `host '${name}' is ${h.provider.state}`, {
      hint: `see: mu host status ${name}`,
    });
  }
  return h;
}

/** Starts the host's plugin and checks it still answers as the instance the host is recorded under. */
export async function openLink(
  io: Io,
  sup: Supervisor,
  name: string,
  h: LinkHost,
): Promise<OpenLink> {
  const { hello } = await sup.ready(h.reg, ["link"]);
  const link = hello.seams.link;
  if (!link)
    throw new RefusedError("load.seam.missing", "plugin", `'${h.reg.name}' declares no link`, {
      hint: seamHint("link"),
    });
  sameInstance(name, h.reg.name, h.instance, hello.instance, h.profile !== undefined);
  return { io, sup, host: h, name, link };
}

/**
 * Runs `fn` holding one of the machine's channels when mu arbitrates them.
 * Profiles that share an identity are one machine, so their calls share its
 * slots, and the smallest --max-sessions any of them sets bounds them all.
 */
export async function holdingSlot<T>(l: OpenLink, fn: () => Promise<T>): Promise<T> {
  const p = l.host.profile;
  const machine = p ? identity(p) : l.name;
  // A link that keeps its own slots ignores the bound: no read for it.
  const maxSessions =
    p && l.link.slots === "mu"
      ? await openStore(l.io.ports).read((db) => machineBound(listProfiles(db), p))
      : null;
  return withSlot(
    l.io.ports,
    { host: machine, maxSessions, slots: l.link.slots },
    (n) =>
      l.io.err(
        `mu: host: all ${n} sessions of ${l.name} (${machine}) are in use; waiting for one\n`,
      ),
    fn,
  );
}

/**
 * The host's plugin, fenced on every attempt: a retry may meet a plugin that
 * exited and came back answering for another backend, which openLink's
 * check, made once, never saw.
 */
function fencedReg(l: OpenLink): Registration {
  const { reg, instance, profile } = l.host;
  return {
    ...reg,
    fence: (now) => sameInstance(l.name, reg.name, instance, now, profile !== undefined),
  };
}

/** One link.exec, link.fetch or link.push, with its slot and its grace. */
export async function linkRun(
  l: OpenLink,
  method: "link.exec" | "link.fetch" | "link.push",
  params: Record<string, unknown>,
  timeoutMs: number,
): Promise<RunResult> {
  return holdingSlot(l, async () => {
    const r = (await callPlugin(l.sup, l.io.ports.clock, fencedReg(l), {
      method,
      params: { target: l.host.target, ...params, timeoutMs },
      // The plugin enforces timeoutMs; mu waits one grace more for its answer.
      timeoutMs: timeoutMs + GRACE_MS,
      effect: false,
    })) as RunResult;
    // A "stopping" link finishes stopping within one grace of its answer; the
    // channel stays taken until then.
    if (r.exitCode === null && l.link.remoteOnTimeout === "stopping") {
      await l.io.ports.clock.sleep(GRACE_MS);
    }
    return r;
  });
}

/**
 * A link run that did not succeed, with where to look. `flag` is the verb's
 * option for the time limit, named in the hint only where the verb has one.
 */
export function failed(
  l: OpenLink,
  what: string,
  r: Pick<RunResult, "exitCode" | "stderr">,
  timeoutMs: number,
  look: string,
  flag?: string,
): UnavailableError {
  const timedOut = r.exitCode === null;
  const why = timedOut
    ? `timed out after ${timeoutMs} ms`
    : `exit ${r.exitCode}${r.stderr.trim() ? `: ${firstLine(r.stderr.trim())}` : ""}`;
  return new UnavailableError(
    `host.${what}.failed`,
    "host",
    `${what} on ${l.name} failed (${why})`,
    {
      hint: timedOut && flag ? `raise ${flag}, or ${look}` : look,
    },
  );
}

/** Where to look when a fetch failed: on the host, or here for a --fetch template. */
function fetchLook(l: OpenLink, remoteCwd: string, localRepo: string): string {
  if (!l.link.fetch) {
    return `the host's --fetch template ran here, for ${localRepo}: run it there by hand to see why`;
  }
  return `check that ${remoteCwd} on ${l.name} has a commit: mu host exec ${l.name} -- ${q(`git -C ${shWord(remoteCwd)} log -1 --oneline`)}`;
}

/**
 * Fetches remoteCwd's HEAD through the link or, when it cannot fetch,
 * through the profile's --fetch template run here, and pins it as `ref` in
 * localRepo. The fetch runs in a fetch place of its own (see
 * git/fetch-place.ts), so the sha returned is the tip this fetch brought,
 * whatever other fetches run in the checkout meanwhile; once this returns,
 * `ref` holds it. `flag`, where the verb has one, is the option a
 * timed-out fetch's hint names.
 */
export async function fetchInto(
  l: OpenLink,
  remoteCwd: string,
  localRepo: string,
  ref: string,
  timeoutMs: number,
  flag?: string,
): Promise<string> {
  if (checkoutOf(localRepo) === null) throw notACheckout(localRepo);
  const template = l.host.profile?.fetch;
  if (!l.link.fetch && !template) {
    throw new RefusedError(
      "host.fetch.none",
      "host",
      `'${l.host.reg.name}' cannot fetch and host '${l.name}' has no --fetch template`,
      { hint: `add the host as a profile with --fetch '<template>'` },
    );
  }
  // The plant fetches through the checkout's own FETCH_HEAD, shared by every
  // mu and every git fetch there, and takes whatever commit it names.
  const shared = TESTBED_BUILD && planted(l.io.ports.env, "shared-fetch-head");
  const place = shared
    ? localRepo
    : openFetchPlace(localRepo, `${l.io.ports.liveness.self().pid}-${l.io.ports.random.hex(8)}`);
  try {
    let r: Pick<RunResult, "exitCode" | "stderr">;
    if (l.link.fetch) {
      r = await linkRun(l, "link.fetch", { remoteCwd, localRepo: place }, timeoutMs);
    } else {
      const script = fillTemplate(template as string, { host: l.name, remoteCwd });
      r = await holdingSlot(l, () =>
        runTemplate(script, place, timeoutMs, { ...l.io.ports.env } as NodeJS.ProcessEnv),
      );
    }
    if (r.exitCode !== 0)
      throw failed(l, "fetch", r, timeoutMs, fetchLook(l, remoteCwd, localRepo), flag);
    const sha = fetchedTip(place);
    if (sha === null) {
      // Nothing but this fetch writes in the place, so an empty one is the fetch's own doing.
      throw new UnavailableError(
        "host.fetch.no-head",
        "host",
        `the fetch from ${l.name} reported success but left no FETCH_HEAD in mu's own fetch place for ${localRepo}`,
        {
          hint: l.link.fetch
            ? `no other process writes there, so '${l.host.reg.name}''s link.fetch did not fetch; tell its author`
            : "the host's --fetch template must fetch into the directory it runs in: fix it",
        },
      );
    }
    if (!shared) bringIn(localRepo, place, sha);
    pinRef(localRepo, ref, sha, `mu: fetched from ${l.name}:${remoteCwd}`);
    return sha;
  } finally {
    if (!shared) closeFetchPlace(place);
  }
}

export function notACheckout(path: string): UsageError {
  return new UsageError("host.not-a-checkout", "usage", `${path} is not inside a git checkout`, {
    hint: "run mu from your repository, or name one",
  });
}

import type { Database } from "sql.js";
import { stuckForGood, type Witness } from "../effects/forgettable.js";
import { type Intent, intentsFor, intentsWhere } from "../effects/journal.js";
import { pendingVerb } from "../effects/settle-verb.js";
import { allAgents, allJobs } from "../jobs/records.js";
import { allTreesLeft, whose } from "../jobs/trees-left.js";
import type { SeamName } from "../protocol/declaration.js";
import { listProfiles } from "./profiles.js";
import { listHosts } from "./records.js";

// What keeps a host or a plugin from being removed, each with the verb that
// lets it go, so a refused `rm` can always say what to run next.

export interface Holder {
  /** What holds it, as a user knows it: "agent crew/a", "host h1, ready". */
  what: string;
  /** The verb that frees it, as a user would type it. */
  free: string;
  kind: "effect" | "agent" | "machine" | "profile" | "tree";
  /** The agent's workstream/name, the machine's state, the effect's method. */
  name: string;
  /** The seams of the plugin it still calls on: a re-add may not drop them. */
  needs: SeamName[];
  /** The pid of a live mu at work on it: `free` is refused until that mu ends. */
  by?: number;
}

const closeVerb = (ws: string, name: string) => `mu agent close ${name} -w ${ws}`;

/** Agents with a job record or a row still in use, on one host or one plugin. */
function agentHolders(
  db: Database,
  on: (a: { host: string; plugin: string }) => boolean,
  w: Witness | undefined,
): Holder[] {
  const seen = new Map<string, Holder>();
  const add = (ws: string, name: string, needs: SeamName[], by?: number) => {
    const h = seen.get(`${ws}/${name}`) ?? {
      what: `agent ${ws}/${name}`,
      name: `${ws}/${name}`,
      free: closeVerb(ws, name),
      kind: "agent" as const,
      needs: [],
    };
    h.needs = [...new Set([...h.needs, ...needs])];
    if (by !== undefined) h.by = by;
    seen.set(`${ws}/${name}`, h);
  };
  // A job is stopped through the job seam and read through the channel; its
  // tree, if any, is collected and removed through the link.
  // A job whose writer lives is that mu's (a spawn finishing it, a close
  // collecting it): the close named here would race it or be refused.
  for (const j of allJobs(db))
    if (on({ host: j.host, plugin: j.plugin }))
      add(
        j.workstream,
        j.agent,
        j.site ? ["job", "channel", "link"] : ["job", "channel"],
        j.writer && w?.alive(j.writer) ? j.writer.pid : undefined,
      );
  for (const a of allAgents(db))
    if (a.state !== "closed" && on({ host: a.host, plugin: a.channelPlugin }))
      add(a.workstream, a.name, ["channel"]);
  return [...seen.values()];
}

/** Trees closes left on a host: removed through the link, by the next close of the name. */
function treeHolders(db: Database, on: (t: { host: string; plugin: string }) => boolean): Holder[] {
  return allTreesLeft(db)
    .filter(on)
    .map((t) => ({
      what: `the tree ${t.site} ${t.leftBy === "close" ? `a close of ${t.workstream}/${t.agent}` : whose(t)} left`,
      name: t.site,
      free: closeVerb(t.workstream, t.agent),
      kind: "tree" as const,
      needs: ["link"],
    }));
}

function effectHolders(
  db: Database,
  where: "subject = ?" | "plugin = ?",
  arg: string,
  w: Witness | undefined,
): Holder[] {
  return intentsWhere(db, where, arg).map((i) => effectHolder(db, i, w));
}

function effectHolder(db: Database, i: Intent, w: Witness | undefined): Holder {
  // Its writer, or a mu settling it: the verb that settles it is refused meanwhile.
  const at = w?.alive(i.writer) ? i.writer : i.resolver && w?.alive(i.resolver) ? i.resolver : null;
  return {
    what: `pending ${i.method} for ${i.subject} (key ${i.key}${at ? `; mu pid ${at.pid} is at it` : ""})`,
    free: settleVerb(db, i, w),
    kind: "effect" as const,
    name: i.method,
    needs: [i.method.split(".")[0] as SeamName],
    ...(at ? { by: at.pid } : {}),
  };
}

/** The host an agent's effect is about: every job and channel call names it in its target. */
const targetHost = (i: Intent) =>
  (i.params as { target?: { host?: { name?: unknown } } }).target?.host?.name;

/**
 * The verb that frees a provider host's machine: a release, except while
 * its acquire is pending; then whatever settles (or forgets) that acquire.
 */
function machineFree(db: Database, h: { name: string; state: string }, w?: Witness): string {
  const acquire = intentsFor(db, `host:${h.name}`).find((i) => i.method === "host.acquire");
  if (h.state === "acquiring" && acquire) return settleVerb(db, acquire, w);
  return `mu host release ${h.name}`;
}

/** The verb that settles a pending intent; forget, with a witness, for one no rule can settle. */
function settleVerb(db: Database, i: Intent, w: Witness | undefined): string {
  return pendingVerb(i.subject, i.method, i.params, w !== undefined && stuckForGood(db, i, w));
}

/** A provider host's record goes once its machine is released (or lost). */
const machineHeld = (state: string) => state === "ready" || state === "acquiring";

/**
 * What keeps host `name` (a profile or a provider's machine) from being
 * removed: what names its record, and its machine while acquired. An
 * agent's pending call names the host in its target even once the job is
 * gone, so it holds the host until settled. With a witness, a pending
 * effect no rule can settle is freed by forget.
 */
export function hostHolders(db: Database, name: string, w?: Witness): Holder[] {
  const out = recordHolders(db, name, true, w);
  const h = listHosts(db, name)[0];
  if (h && machineHeld(h.state))
    out.push({
      what: `its machine, ${h.state}`,
      free: machineFree(db, h, w),
      kind: "machine",
      name: h.state,
      needs: ["host", "link"],
    });
  return out;
}

/**
 * What names host `name`'s record, its machine aside: the agents and jobs
 * on it and every effect pending on it (an agent's calls carry the host in
 * their target). While any is there the machine may not be released, nor
 * the record taken over by a new acquire: each would be left calling on a
 * machine that is gone, or on another one. `own` counts the host's own
 * acquire and release too.
 */
export function recordHolders(db: Database, name: string, own: boolean, w?: Witness): Holder[] {
  const effects = intentsWhere(db, "1 = 1").filter((i) =>
    i.subject === `host:${name}` ? own : i.subject.startsWith("agent:") && targetHost(i) === name,
  );
  return [
    ...effects.map((i) => effectHolder(db, i, w)),
    ...agentHolders(db, (r) => r.host === name, w),
    ...treeHolders(db, (r) => r.host === name),
  ];
}

/** "has a pending job.start for … and still runs agent crew/a": what holds a host, in words. */
export function heldBy(holders: readonly Holder[]): string {
  const of = (k: Holder["kind"]) => holders.filter((h) => h.kind === k);
  const agents = of("agent").map((h) => h.name);
  return [
    ...of("effect").map((h) => `has a ${h.what}`),
    ...(agents.length > 0
      ? [`still runs ${agents.length === 1 ? "agent" : "agents"} ${agents.join(", ")}`]
      : []),
    ...of("tree").map((h) => `still has ${h.what}`),
    ...of("machine").map((h) => `is ${h.name}`),
  ].join(" and ");
}

/**
 * What keeps plugin `name` from being removed, in the order to free it: the
 * one list `plugin rm` refuses on, and a re-add checks its seams against.
 */
export function pluginHolders(db: Database, name: string, w?: Witness): Holder[] {
  const out = [
    ...effectHolders(db, "plugin = ?", name, w),
    ...agentHolders(db, (r) => r.plugin === name, w),
    ...treeHolders(db, (r) => r.plugin === name),
  ];
  for (const h of listHosts(db))
    if (h.plugin === name)
      out.push({
        what: `host ${h.name}, ${h.state}`,
        free: machineHeld(h.state) ? machineFree(db, h, w) : `mu host rm ${h.name}`,
        kind: "machine",
        name: h.state,
        needs: machineHeld(h.state) ? ["host", "link"] : [],
      });
  for (const p of listProfiles(db))
    if (p.plugin === name)
      out.push({
        what: `host profile ${p.name}`,
        free: `mu host rm ${p.name}`,
        kind: "profile",
        name: p.name,
        needs: ["link"],
      });
  return out;
}

/** "free it: mu agent close a -w crew (agent crew/a); mu host rm box (…)", each verb once. */
export function freeingHint(
  holders: readonly Holder[],
  withWhat: boolean,
  lead = "free it",
): string {
  if (holders.length === 0) return "see: mu state";
  const verbs = new Map<string, string>();
  for (const h of holders) if (!verbs.has(h.free)) verbs.set(h.free, h.what);
  return `${lead}: ${[...verbs].map(([verb, what]) => (withWhat ? `${verb} (${what})` : verb)).join("; ")}`;
}

/**
 * While a live mu is at work on any holder, the verbs that free them would
 * race it or be refused: the one thing to do is wait for it, then run the
 * refused verb again (whose next refusal names what still holds, if any).
 */
export function waitHint(holders: readonly Holder[], again: string): string | undefined {
  const pids = [...new Set(holders.flatMap((h) => (h.by === undefined ? [] : [h.by])))];
  if (pids.length === 0) return undefined;
  return `wait for mu ${pids.length === 1 ? "pid" : "pids"} ${pids.join(", ")} to finish, then run ${again} again`;
}

/** "2 host profile(s), 1 agent(s)": how many of each kind hold it, for a refusal's message. */
export function counted(holders: readonly Holder[]): string {
  const words: [Holder["kind"], string][] = [
    ["profile", "host profile(s)"],
    ["machine", "host record(s)"],
    ["effect", "pending effect(s)"],
    ["agent", "agent(s)"],
    ["tree", "tree(s) left"],
  ];
  return words
    .map(([k, w]) => [holders.filter((h) => h.kind === k).length, w] as const)
    .filter(([n]) => n > 0)
    .map(([n, w]) => `${n} ${w}`)
    .join(", ");
}

import { type ModelState, subjectsOf } from "./state.js";

// What each verb the explorer runs must answer, given what the model knows.
// The exit codes are docs/cli.md's table and the refusals hosts.md and
// agents.md give per verb; a verb on a record the model knows is gone is
// not found (3) whatever the plugin does, since nothing is asked then.

/** Exit codes a verb may end with; undefined when the model cannot say. */
export type Allowed = number[] | undefined;

/** Verbs on one agent that need its record and nothing else to begin. */
const ON_AGENT = ["send", "command", "interrupt", "abort", "answer", "read", "reattach", "close"];

/**
 * The exit codes allowed for a verb. `calm`: no fault is set, no crash
 * point, no other mu runs, and the plugin answers as the instance mu
 * recorded things under; only then does the model predict success.
 */
export function allowedExits(m: ModelState, words: string[], calm: boolean): Allowed {
  const [group, verb, name = ""] = words;
  if (group === "agent" && ON_AGENT.includes(verb ?? "")) {
    const a = m.agent(name);
    // A close cut short after it ended the record may leave its tree's
    // removal owed, which only a close finishes: the others find no agent.
    if (a.state === "absent") return verb === "close" && a.doubt.owes ? [0, 3] : [3];
    if (!calm || a.state !== "live") return undefined;
    const host = a.host ? m.host(a.host).state : "unknown";
    // A delivery to an agent whose machine is released or lost is refused.
    if (host === "released" || host === "lost") return undefined;
    if (verb === "read" || verb === "close") return [0];
    if (verb === "send" && words.length === 4) return [0];
    // A kind may not honour --steer, --fresh or a command: a usage refusal.
    if (verb === "send" || verb === "command") return [0, 2];
    return undefined;
  }
  if (group === "agent" && verb === "forget") {
    const a = m.agent(name);
    if (a.state === "absent") return [3];
    // A record with nothing pending: nothing to forget.
    if (calm && a.state === "live") return [4];
    return undefined;
  }
  if (group === "agent" && verb === "spawn") {
    const a = m.agent(name);
    // One job per name: once spawned, a spawn of the name is refused.
    if (a.state === "live") return [4];
    if (a.state !== "absent") return undefined;
    const h = m.host(words[words.indexOf("--host") + 1] ?? "");
    if (h.state === "absent") return [3];
    // Admission: a provider's machine must be ready.
    if (h.machine && (h.state === "released" || h.state === "lost")) return [4];
    return calm && h.state === "ready" && m.plugin(h.plugin ?? "") === "present" ? [0] : undefined;
  }
  if ((group === "agent" && verb === "list") || group === "state") return calm ? [0] : undefined;
  if (group === "host") return hostExits(m, words, calm);
  if (group === "plugin" && verb === "rm") {
    // A plugin that is not registered is not found; one a host holds is kept.
    if (m.plugin(name) === "absent") return [3];
    const hosts = [...m.hosts.values()].filter((h) => h.plugin === name || h.plugin === undefined);
    if (hosts.some((h) => h.state !== "absent" && h.state !== "unknown")) return [4];
    return calm && m.plugin(name) === "present" && hosts.every((h) => h.state === "absent")
      ? [0]
      : undefined;
  }
  return undefined;
}

function hostExits(m: ModelState, words: string[], calm: boolean): Allowed {
  const verb = words[1];
  const h = m.host(verb === "acquire" ? (words[words.length - 1] ?? "") : (words[2] ?? ""));
  const agents = m.agentsOn(words[verb === "acquire" ? words.length - 1 : 2] ?? "");
  const noAgents = agents.length === 0;
  const someLive = agents.some((a) => a.state === "live" || a.state === "present");
  if (verb === "add" || verb === "acquire") {
    // The name is taken while its record is there (a released one is taken over).
    if (h.state === "ready") return [4];
    const by = subjectsOf(words).plugin ?? "";
    // A host of a plugin that is not registered: not found.
    if (m.plugin(by) === "absent") return [3];
    if (!calm || m.plugin(by) !== "present") return undefined;
    if (h.state === "absent") return [0];
    return h.state === "released" && noAgents ? [0] : undefined;
  }
  if (h.state === "absent") return [3];
  if (!calm || h.state === "unknown") return undefined;
  if (verb === "status") return [0];
  // A host with nothing pending has nothing to forget.
  if (verb === "forget") return [4];
  if (verb === "release" && h.machine) {
    if (h.state === "released") return [0];
    if (someLive) return [4];
    return noAgents && h.state === "ready" ? [0] : undefined;
  }
  if (verb === "rm") {
    if (someLive || (h.machine && h.state === "ready")) return [4];
    return noAgents ? [0] : undefined;
  }
  return undefined;
}

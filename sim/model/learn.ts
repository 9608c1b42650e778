import { type ModelState, subjectsOf } from "./state.js";

// What a verb's ending teaches the model, whatever the faults: an exit 0 is
// done and recorded, a 3 is a record that is not there (docs/cli.md), and a
// host's status line names its state.

export function learn(m: ModelState, words: string[], exit: number, stdout: string): void {
  const [group, verb] = words;
  const on = subjectsOf(words);
  const agent = on.agents[0] ?? "";
  const host = on.hosts[0] ?? "";
  if (exit === 3) {
    if (group === "plugin" && on.plugin) m.plugins.set(on.plugin, "absent");
    if (group === "agent" && verb !== "spawn" && verb !== "list") m.agent(agent).state = "absent";
    if (group === "host" && verb !== "add" && verb !== "acquire") absentHost(m, host);
    return;
  }
  if (exit !== 0) return;
  if (group === "plugin" && on.plugin)
    m.plugins.set(on.plugin, verb === "rm" ? "absent" : "present");
  if (group === "agent") {
    if (verb === "close" || verb === "forget") m.agent(agent).state = "absent";
    else if (verb === "spawn") Object.assign(m.agent(agent), { state: "live", host: on.hosts[0] });
    else if (verb !== "list" && m.agent(agent).state !== "live") m.agent(agent).state = "present";
  }
  if (group !== "host") return;
  const h = m.host(host);
  // A profile host is added by name, a provider's machine acquired.
  if (verb === "add" || verb === "acquire")
    Object.assign(h, {
      state: "ready",
      plugin: on.plugin,
      machine: verb === "acquire",
      instance: recordedInstance(stdout),
    });
  else if (verb === "release") h.state = "released";
  else if (verb === "rm" || verb === "forget") absentHost(m, host);
  else if (verb === "status") {
    const state = new RegExp(`^${host}\\t(\\w+)`, "m").exec(stdout)?.[1];
    h.state = state === "ready" || state === "released" || state === "lost" ? state : "unknown";
    // A lost machine takes its agents with it, or stops the ones that outlive it.
    if (h.state === "lost") for (const a of m.agentsOn(host)) a.state = "unknown";
  }
}

/** A host gone: no agent can be left on it. */
function absentHost(m: ModelState, host: string): void {
  m.host(host).state = "absent";
  for (const a of m.agentsOn(host)) if (a.host === host) a.state = "absent";
}

/** The instance an add ("added box (plugin:sim:sim-1)") or an acquire ("…, instance sim-1)") names. */
function recordedInstance(stdout: string): string | undefined {
  return /\(plugin:[^:\s]+:([^)\s]+)\)|, instance ([^)\s]+)\)/.exec(stdout)?.slice(1).find(Boolean);
}

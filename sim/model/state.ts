// What the model knows of mu's records between steps. Each agent and host is
// known to be in one state, or unknown: a verb that met a fault, a crash, a
// power cut or another mu running beside it leaves what it touched unknown,
// and a later verb's exit code or read teaches the model again.

/** What a verb names: its agents, its hosts, the plugin it registers, removes or names. */
export interface Subjects {
  agents: string[];
  hosts: string[];
  plugin?: string;
}

/** The agents and hosts a verb's words name. */
export function subjectsOf(words: string[]): Subjects {
  const [group, verb] = words;
  const host = words.includes("--host") ? [words[words.indexOf("--host") + 1] ?? ""] : [];
  const none = { agents: [], hosts: [] };
  if (group === "wait")
    return {
      agents: words.slice(1).filter((w) => !w.startsWith("-") && !/^\d/.test(w)),
      hosts: [],
    };
  if (group === "agent" && verb !== "list") return { agents: [words[2] ?? ""], hosts: host };
  if (group === "host" && verb !== "list") {
    const name = verb === "acquire" ? words[words.length - 1] : words[2];
    const flag = words.indexOf(verb === "add" ? "--plugin" : "--provider");
    const by = flag >= 0 ? words[flag + 1] : undefined;
    return { agents: [], hosts: [name ?? ""], ...(by !== undefined ? { plugin: by } : {}) };
  }
  if (group === "plugin" && verb !== "list") return { ...none, plugin: words[2] ?? "" };
  return none;
}

/**
 * live: a spawn of it finished; present: its record is there, but a spawn
 * may still be unfinished (a spawn then resumes instead of refusing).
 */
export type AgentState = "absent" | "live" | "present" | "unknown";
export type HostState = "absent" | "ready" | "released" | "lost" | "unknown";

export interface Doubt {
  first?: number;
  last?: number;
  /** An intent on it may still be pending, for the next verb on it to settle. */
  owes?: boolean;
}

export interface ModelHost {
  state: HostState;
  /** The plugin it was added or acquired through. */
  plugin?: string;
  /** A provider's machine, as opposed to a profile host added by name. */
  machine: boolean;
  /** Virtual times of the first and the last verb on it that may have left an acquire pending. */
  doubt: Doubt;
  /** The plugin instance mu recorded it under, as the add or acquire printed it. */
  instance?: string;
}

export interface ModelAgent {
  state: AgentState;
  host?: string;
  /** Virtual times of the first and the last verb on it that may have left a start pending. */
  doubt: Doubt;
}

export class ModelState {
  readonly hosts = new Map<string, ModelHost>();
  readonly agents = new Map<string, ModelAgent>();
  /** Each plugin's registration: unknown once a verb on it was in doubt. */
  readonly plugins = new Map<string, "absent" | "present" | "unknown">();

  /** A run that did not start from an empty registry: a plugin never seen is unknown, not absent. */
  unknownPlugins = false;

  plugin(name: string): "absent" | "present" | "unknown" {
    return this.plugins.get(name) ?? (this.unknownPlugins ? "unknown" : "absent");
  }

  host(name: string): ModelHost {
    let h = this.hosts.get(name);
    if (!h) {
      // Until an add or an acquire says which: the workloads name profile hosts box and box2.
      h = { state: "absent", machine: name !== "box" && name !== "box2", doubt: {} };
      this.hosts.set(name, h);
    }
    return h;
  }

  agent(name: string): ModelAgent {
    let a = this.agents.get(name);
    if (!a) {
      a = { state: "absent", doubt: {} };
      this.agents.set(name, a);
    }
    return a;
  }

  /** Every agent the model places on a host, or may. */
  agentsOn(host: string): ModelAgent[] {
    return [...this.agents.values()].filter(
      (a) => a.state !== "absent" && (a.host === host || a.host === undefined),
    );
  }

  /**
   * A verb in doubt: what it names is no longer known. An agent whose spawn
   * finished keeps its record through any verb but one that ends agents
   * (a close, a forget, a host's loss); an agent verb leaves its host as it was.
   */
  doubt(on: Subjects, now: number, words: string[] = []): void {
    const mark = (x: { state: string; doubt: Doubt }) => {
      x.state = "unknown";
      x.doubt.first ??= now;
      x.doubt.last = now;
      x.doubt.owes = true;
    };
    const ends =
      !["agent", "wait"].includes(words[0] ?? "") ||
      ["spawn", "close", "forget"].includes(words[1] ?? "");
    for (const n of on.agents) {
      const a = this.agent(n);
      if (ends || a.state !== "live") mark(a);
      else a.doubt.owes = true;
    }
    if (words[0] === "agent") return;
    for (const n of on.hosts) {
      mark(this.host(n));
      // A host in doubt may have been lost, and its agents with it.
      for (const a of this.agentsOn(n)) a.state = "unknown";
    }
    // A registration is in doubt only after a verb on the plugin itself.
    if (words[0] === "plugin" && on.plugin !== undefined) this.plugins.set(on.plugin, "unknown");
  }

  /** Whether a verb on these may first settle an intent another verb left. */
  owes(on: Subjects): boolean {
    return (
      on.agents.some((n) => this.agent(n).doubt.owes) ||
      on.hosts.some((n) => this.host(n).doubt.owes)
    );
  }

  /** A verb in calm ended: whatever it found pending on these it settled first. */
  settled(on: Subjects): void {
    for (const n of on.agents) this.agent(n).doubt.owes = false;
    for (const n of on.hosts) this.host(n).doubt.owes = false;
  }

  /** Everything in doubt at once: a power cut, or several mu whose order the model does not follow. */
  doubtAll(now: number): void {
    this.doubt({ agents: [...this.agents.keys()], hosts: [...this.hosts.keys()] }, now, ["all"]);
    for (const p of this.plugins.keys()) this.plugins.set(p, "unknown");
  }
}

// A delivery `mu state` names as pending holds the host its agent runs on,
// whatever became of the agent's job: its call names that host in its
// target, and only a verb on the agent settles it (decisions.md, what keeps
// a host from being removed). So a `host rm` of that host run right after
// that `state`, nothing beside or between them, is refused, never done.

const LINE = /^pending: channel\.\w+ for agent:[^/\s]+\/(\S+) \(key \S+\)/gm;

export class DeliveryWatch {
  /** The hosts the last step, a `state` in calm, found held by a pending delivery. */
  private held: { host: string; agent: string }[] = [];
  /** Every host a spawn of each agent named: an agent spawned on two may be on either. */
  private spawnedOn = new Map<string, Set<string>>();

  /** Any mu step, alone or not: the hosts its spawns name. */
  note(words: string[]): void {
    if (words[0] !== "agent" || words[1] !== "spawn" || !words.includes("--host")) return;
    const on = this.spawnedOn.get(words[2] ?? "") ?? new Set<string>();
    on.add(words[words.indexOf("--host") + 1] ?? "");
    this.spawnedOn.set(words[2] ?? "", on);
  }

  /** One mu step run alone; the divergence, if it is a `host rm` that removed a host so held. */
  step(words: string[], exit: number | null, stdout: string, calm: boolean): string | undefined {
    const was = this.held;
    this.held = [];
    if (words[0] === "state" && words.length === 1 && exit === 0 && calm) {
      for (const [, agent = ""] of stdout.matchAll(LINE)) {
        const hosts = [...(this.spawnedOn.get(agent) ?? [])];
        if (hosts.length === 1 && hosts[0]) this.held.push({ host: hosts[0], agent });
      }
      return undefined;
    }
    if (words[0] !== "host" || words[1] !== "rm" || exit !== 0) return undefined;
    const by = was.find((h) => h.host === words[2]);
    return by
      ? `removed host ${by.host}, which the pending delivery to agent ${by.agent} that the state before named still targets`
      : undefined;
  }

  /** Several mu at once: what the last state found may have been settled since. */
  forget(): void {
    this.held = [];
  }
}

// The verb that settles each kind of pending effect: `mu state` lists it,
// and a refused `rm` names it. A start or an acquire no rule can ever settle
// is ended by a person: then it is forget (host/effects/forgettable.ts).

/** The verb that settles a pending effect, as a user would type it. */
export function pendingVerb(
  subject: string,
  method: string,
  params: Record<string, unknown>,
  forGood = false,
): string {
  const [kind, name = ""] = subject.split(":");
  if (kind === "host") return forGood ? `mu host forget ${name}` : `mu host status ${name}`;
  const [ws, agent] = name.split("/");
  const p = params as {
    msgId?: string;
    target?: { host?: { name?: string } };
    spec?: { firstPrompt?: { msgId: string } };
  };
  if (method === "job.start") {
    const first = p.spec?.firstPrompt?.msgId;
    if (forGood) return `mu agent forget ${agent} -w ${ws}`;
    return first
      ? `mu agent check ${agent} ${first} -w ${ws}`
      : `mu agent spawn ${agent} --host ${p.target?.host?.name ?? "<host>"} -w ${ws}`;
  }
  if (method === "job.stop") return `mu agent close ${agent} -w ${ws}`;
  return p.msgId
    ? `mu agent check ${agent} ${p.msgId} -w ${ws}`
    : `mu agent read ${agent} -w ${ws}`;
}

// The verb that settles each kind of pending effect: `mu state` lists it,
// and a refused `rm` names it.

/** The verb that settles a pending effect, as a user would type it. */
export function pendingVerb(
  subject: string,
  method: string,
  params: Record<string, unknown>,
): string {
  const [kind, name = ""] = subject.split(":");
  if (kind === "host") return `mu host status ${name}`;
  const [ws, agent] = name.split("/");
  const p = params as {
    msgId?: string;
    target?: { host?: { name?: string } };
    spec?: { firstPrompt?: { msgId: string } };
  };
  if (method === "job.start") {
    const first = p.spec?.firstPrompt?.msgId;
    return first
      ? `mu agent check ${agent} ${first} -w ${ws}`
      : `mu agent spawn ${agent} --host ${p.target?.host?.name ?? "<host>"} -w ${ws}`;
  }
  if (method === "job.stop") return `mu agent close ${agent} -w ${ws}`;
  return p.msgId
    ? `mu agent check ${agent} ${p.msgId} -w ${ws}`
    : `mu agent read ${agent} -w ${ws}`;
}

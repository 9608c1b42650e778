// How scenarios count the wire: messages by method, one direction at a
// time; an invalid line counts as "invalid", a reply as "reply". Shared by
// both engines and the check that they agree.

export function messageCounts(
  transcript: readonly unknown[],
  dir: "in" | "out",
): Record<string, number> {
  const c: Record<string, number> = {};
  for (const raw of transcript) {
    const e = raw as { dir: string; msg: Record<string, unknown> };
    if (e.dir !== dir) continue;
    const key =
      typeof e.msg.method === "string" ? e.msg.method : "invalid" in e.msg ? "invalid" : "reply";
    c[key] = (c[key] ?? 0) + 1;
  }
  return c;
}

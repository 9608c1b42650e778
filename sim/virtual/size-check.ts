import { MAX_LINE_BYTES } from "../../host/plugin/framing.js";

// The transport's line limit holds for every request mu sends, and not by
// luck of the moment: a request whose intent mu wrote may be sent again
// later with a longer id and a later deadline, so it must fit with both at
// their widest. A request that could outgrow the limit is refused before
// anything is written.

const WIDEST = Number.MAX_SAFE_INTEGER;

export function oversizeRequests(sent: string): string[] {
  const found: string[] = [];
  for (const line of sent.split("\n")) {
    // Only a line near the limit can be over it once widened.
    if (line.length < MAX_LINE_BYTES - 1_024) continue;
    let msg: { id?: unknown; method?: string; params?: Record<string, unknown> };
    try {
      msg = JSON.parse(line);
    } catch {
      continue;
    }
    if (msg.id === undefined) continue;
    const params =
      msg.params && "deadline" in msg.params ? { ...msg.params, deadline: WIDEST } : msg.params;
    const bytes = Buffer.byteLength(JSON.stringify({ ...msg, id: WIDEST, params }));
    if (bytes > MAX_LINE_BYTES)
      found.push(
        `mu sent a ${msg.method} that would be ${bytes} bytes with its id and deadline at their widest, over the ${MAX_LINE_BYTES}-byte line limit`,
      );
  }
  return found;
}

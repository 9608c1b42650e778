import { methodDefs, validate } from "../../host/protocol/schema.js";
import { PAUSE_METHOD } from "../../host/testbed-pause.js";

// The sim reads mu's side of the wire as strictly as mu reads the plugin's:
// a plugin author relies on every line mu writes being a JSON-RPC 2.0 request
// or one of mu's two notifications, in the schema's shape, with an id not
// used before in the process, a `$/cancel` that names a request it sent, a
// deadline that has not already passed, and nothing after `shutdown`. A
// slip is noted in the world's transcript (`muSlip`); both engines fail the
// scenario on one, and the explorer counts it as a broken invariant.

/** Slack for a deadline seen as past: the pipe and a busy machine take time. */
const ARRIVAL_SLACK_MS = 1_000;

export class MuMessages {
  private readonly ids = new Set<number>();
  private shutdown = false;

  /** `now` is the plugin's clock without any skew a fault gave it. */
  constructor(private readonly now: () => number) {}

  /** What is wrong with one message mu wrote, or undefined. */
  slip(msg: Record<string, unknown>): string | undefined {
    if (this.shutdown) return "a message after shutdown";
    const method = typeof msg.method === "string" ? msg.method : "";
    const request = "id" in msg;
    const envelope = validate(request ? "envelope.request" : "envelope.notification", msg);
    if (!envelope.ok) return `not a JSON-RPC 2.0 message: ${envelope.errors.join("; ")}`;
    // The testbed's pause (host/testbed-pause.ts) is in no seam: only its id is checked.
    if (request && method === PAUSE_METHOD) return this.freshId(msg.id as number);
    const defs = methodDefs(method);
    const sends = request
      ? defs?.result !== undefined
      : method === "$/cancel" || method === "shutdown";
    if (!defs || !sends)
      return `a ${request ? "request" : "notification"} mu never sends: '${method}'`;
    const params = msg.params as Record<string, unknown>;
    const shape = validate(defs.params, params);
    if (!shape.ok) return `${method} params: ${shape.errors.join("; ")}`;
    if (request) {
      const used = this.freshId(msg.id as number);
      if (used) return used;
      const deadline = params.deadline;
      if (typeof deadline === "number" && deadline < this.now() - ARRIVAL_SLACK_MS)
        return `${method} arrived ${this.now() - deadline} ms after its deadline`;
      return undefined;
    }
    if (method === "shutdown") this.shutdown = true;
    if (typeof params.id === "number" && !this.ids.has(params.id))
      return `a $/cancel for id ${params.id}, which mu never sent`;
    return undefined;
  }

  private freshId(id: number): string | undefined {
    if (this.ids.has(id)) return `id ${id} used for a second request`;
    this.ids.add(id);
    return undefined;
  }
}

/** The slips a run's transcript holds, a line each. */
export function muSlips(transcript: readonly { dir: string; msg: Record<string, unknown> }[]) {
  return transcript
    .filter((l) => l.dir === "note" && "muSlip" in l.msg)
    .map((l) => String(l.msg.muSlip));
}

import type { InitializeResult, SeamName } from "../protocol/declaration.js";
import { type RunContext, Session } from "./session.js";
import { describeCall, fail, type Outcome, pass } from "./verdict.js";
import { clip } from "./wire.js";

// The handshake as every start of mu judges it (schema, digest, load rules,
// the declaration `plugin add` recorded), twice: a plugin whose declaration
// wobbles between starts would be refused at some later start in the field.

export async function handshake(
  ctx: RunContext,
  needs: readonly SeamName[],
): Promise<{ outcome: Outcome; hello?: InitializeResult }> {
  const hellos: InitializeResult[] = [];
  for (const n of [1, 2]) {
    let s: Session;
    try {
      s = await Session.open(ctx, "handshake", needs);
    } catch (err) {
      const stderr = ctx.logs
        .at(-1)
        ?.wire.linesWith("")
        .find((l) => l.stream === "stderr");
      return {
        outcome: fail(`start ${n} did not load: ${describeCall(err)}`, [
          describeCall(err),
          ...(stderr?.line ? [`stderr: ${clip(stderr.line, 400)}`] : []),
        ]),
      };
    }
    hellos.push(s.hello);
    await s.close();
  }
  // Each start's load rules compared its declaration with the one
  // `plugin add` recorded, so two starts that loaded declared the same.
  const [a, b] = hellos as [InitializeResult, InitializeResult];
  // mu files every host, job and effect under the instance; one that moves
  // between starts of the same configuration orphans them all.
  if (a.instance !== b.instance) {
    return {
      outcome: fail(
        `the two starts named different instances (${a.instance}, then ${b.instance}); mu files every record under it`,
        [`start 1: instance ${a.instance}`, `start 2: instance ${b.instance}`],
      ),
    };
  }
  const seams = Object.keys(a.seams).join(", ");
  return {
    outcome: pass(
      `protocol ${a.protocol}, ${a.plugin.name} ${a.plugin.version}, instance ${a.instance}, seams ${seams}: valid, digest matches, loads${needs.length ? ` with ${needs.join(" and ")}` : ""}; the same on two starts`,
    ),
    hello: a,
  };
}

import { randomBytes } from "node:crypto";
import { ErrorReply } from "../plugin/call-errors.js";
import { GRACE_MS } from "../plugin/plugin-process.js";
import { inFresh } from "./fresh.js";
import { holding } from "./host-proof.js";
import { acquire, type Machine, newKey, release, statusUntil } from "./host-seam.js";
import { exec, shown } from "./link-roundtrip.js";
import type { RunContext, Session } from "./session.js";
import { CheckFailed, describeCall, type Outcome, pass } from "./verdict.js";

// A gone status is mu's proof that the machine and its trees no longer
// exist: mu records them lost and never calls on them again. What can be
// seen of that from outside is that nothing runs there any more. The check
// leaves a file on the machine, releases it, waits for gone, then asks a new
// process to run a script there that prints a fresh word and the file: a
// refusal, or a result without the word, is what a gone machine gives.

const EXEC_MS = 20_000;

export async function hostGone(
  ctx: RunContext,
  s: Session,
  params: Record<string, string>,
): Promise<Outcome> {
  let m: Machine | undefined;
  const left = randomBytes(8).toString("hex");
  const file = `.mu-check-${ctx.runId}-gone`;
  return holding(
    s,
    () => m,
    async () => {
      m = await inFresh(s, (a) => acquire(a, params, newKey(ctx)));
      const held = m;
      const place = { target: held.target, label: `on ${held.acquired.handle}` };
      await inFresh(s, async (b) => {
        const wrote = await exec(b, place, `printf %s ${left} > ${file} && cat ${file}`);
        if (wrote.exitCode !== 0 || wrote.stdout !== left)
          throw new CheckFailed(
            "a script that writes a file in the login directory of the acquired machine and reads it back failed",
            [shown(wrote)],
          );
        await release(b, held, "host.release from a new process");
      });
      return inFresh(s, async (c) => {
        const gone = await statusUntil(c, held, "gone");
        const word = randomBytes(8).toString("hex");
        let reply: Awaited<ReturnType<typeof exec>> | undefined;
        let refusal: string | undefined;
        try {
          reply = (await c.call(
            "link.exec",
            {
              target: held.target,
              script: `cat ${file} 2>/dev/null; echo ${word}`,
              cwd: ".",
              timeoutMs: EXEC_MS,
            },
            EXEC_MS + GRACE_MS,
          )) as Awaited<ReturnType<typeof exec>>;
        } catch (err) {
          if (!(err instanceof ErrorReply))
            throw new CheckFailed(`link.exec on the released machine: ${describeCall(err)}`, [
              describeCall(err),
            ]);
          refusal = `${err.kind}`;
        }
        if (reply && (reply.stdout.includes(word) || reply.stdout.includes(left)))
          throw new CheckFailed(
            `host.status answered gone for ${held.acquired.handle}, yet link.exec from a new process still ran a script there${reply.stdout.includes(left) ? " and read the file left before the release" : ""}`,
            [`status: ${JSON.stringify(gone)}`, `exec: ${shown(reply)}`],
          );
        return pass(
          `a file left on the machine, released from a new process, status gone, then link.exec there from another ${refusal ? `was refused (${refusal})` : `ran nothing (exit ${reply?.exitCode})`}`,
        );
      });
    },
  );
}

import { canonical } from "../plugin/load-rules.js";
import type { InitializeResult } from "../protocol/declaration.js";
import { exec } from "./link-roundtrip.js";
import { releaseMachines } from "./machines-left.js";
import type { RunContext, Session } from "./session.js";
import { profileTarget, type Target } from "./target.js";
import { type Cleanup, describeCall } from "./verdict.js";

// What the suite made through the plugin, and its removal at the end. A
// stopped job is still the plugin's to remember (a later lookup must find
// it), and protocol v1 has no call to forget one; so where the plugin's
// backend has a link, the suite removes by name what this run made there:
// every name it gave carries the run id, which nothing else can.

/** How deep under the login directory the sweep looks: a plugin's state directory is rarely deeper. */
const DEPTH = 4;
const SWEEP_MS = 60_000;

/** Where the run notes, before its first job, which directories the login directory already held. */
const dirsFile = (runId: string) => `.mu-check-${runId}-dirs`;
const DIRS_END = "# complete";

/** Writes the directory list; its last line says it was written whole. */
function snapshotScript(runId: string): string {
  const f = dirsFile(runId);
  return `{ find . -maxdepth ${DEPTH} -type d -print 2>/dev/null; echo '${DIRS_END}'; } > ${f} && tail -n 1 ${f}`;
}

/**
 * Lists (and with rm, removes) what under '.' is named for this run, one
 * path a line. A directory left empty by that, and by the removal of its
 * own empty children, goes too when the list written before the run's first
 * job shows this run made it; one that was there before is the plugin's
 * own, named and left to it.
 */
function sweepScript(runId: string, rm: boolean): string {
  const each = rm
    ? `if rm -rf -- "$p" 2>/dev/null && [ ! -e "$p" ]; then echo "gone $p"; else echo "kept $p"; fi`
    : `echo "kept $p"`;
  const f = dirsFile(runId);
  return [
    `known=; [ "$(tail -n 1 ${f} 2>/dev/null)" = '${DIRS_END}' ] && known=$(cat ${f})`,
    `out=$(find . -maxdepth ${DEPTH} -name '*mu-check-${runId}*' -prune -print 2>/dev/null |`,
    `while IFS= read -r p; do ${each}; done)`,
    `printf '%s\\n' "$out"`,
    `printf '%s\\n' "$out" | sed -n 's|^gone \\(.*\\)/[^/]*$|\\1|p' | sort -u | while IFS= read -r d; do`,
    `  while [ "$d" != . ] && [ -d "$d" ] && [ -z "$(ls -A -- "$d" 2>/dev/null)" ]; do`,
    `    if [ -n "$known" ] && ! printf '%s\\n' "$known" | grep -qxF -- "$d" && rmdir -- "$d" 2>/dev/null; then`,
    `      echo "made $d"; d=$(dirname -- "$d")`,
    `    else echo "empty $d"; break; fi`,
    "  done",
    "done",
  ].join("\n");
}

/**
 * Before the first job: notes on the backend which directories its login
 * directory holds, so that the end of the run can remove the ones its jobs
 * made and tell them from the plugin's own. Best effort: without the note,
 * the sweep names the emptied directories instead.
 */
export async function noteDirs(
  ctx: RunContext,
  hello: InitializeResult,
  open: () => Promise<Session>,
): Promise<boolean> {
  if (hello.seams.host || !hello.seams.link || !hello.seams.job) return false;
  let s: Session | undefined;
  try {
    s = await open();
    const place = { target: ctx.linkTarget ?? profileTarget(hello), label: "" };
    await exec(s, place, snapshotScript(ctx.runId), SWEEP_MS);
  } catch {
    // The sweep names what it cannot tell.
  } finally {
    await s?.close();
  }
  // Even a failed one may have left its file.
  return true;
}

/**
 * Stops any job a check left running (each check stops its own; this is
 * for a check cut short), then sweeps the backend the jobs ran on.
 */
export async function tidy(
  ctx: RunContext,
  hello: InitializeResult,
  open: () => Promise<Session>,
  noted = false,
): Promise<Cleanup> {
  const made = ctx.made;
  const out: Cleanup = { removed: [], left: [] };
  // A provider's jobs ran on machines the checks acquired: releasing those is the cleanup.
  if (hello.seams.host) return releaseMachines(ctx, open);
  if (made.jobs.size === 0 && made.fenced.size === 0 && !noted) return out;
  let s: Session | undefined;
  try {
    s = await open();
    for (const [key, j] of made.jobs)
      if (!j.stopped) await s.call("job.stop", { target: j.target, key }, 60_000).catch(() => {});
    const running = [...made.jobs].filter(([, j]) => !j.stopped).map(([k]) => k);
    for (const k of running)
      out.left.push({ what: `job ${k}: no job.stop proved it gone; stop it on the backend` });
    const n = made.jobs.size;
    if (n > 0)
      out.removed.push(
        running.length === 0
          ? `stopped every job it started (${n})`
          : `stopped ${n - running.length} of the ${n} jobs it started`,
      );
    if (!hello.seams.link) {
      out.left.push({
        what: `the plugin's record of the keys mu-check-${ctx.runId}-* (the protocol has no call to forget a job, and the plugin declares no link to remove it through)`,
      });
      return out;
    }
    const target: Target = ctx.linkTarget ?? profileTarget(hello);
    const place = { target, label: "" };
    const r = await exec(s, place, sweepScript(ctx.runId, running.length === 0), SWEEP_MS);
    const lines = r.stdout.split("\n");
    const tagged = (tag: string) =>
      lines
        .filter((l) => l.startsWith(`${tag} `))
        .map((l) => l.slice(tag.length + 1).replace(/^\.\//, ""));
    const gone = tagged("gone");
    const kept = tagged("kept");
    if (r.exitCode !== 0 && gone.length + kept.length === 0)
      out.left.push({
        what: `whatever the plugin keeps for the keys mu-check-${ctx.runId}-*: the sweep through link.exec failed (${canonical(r).slice(0, 200)})`,
      });
    const own = gone.filter((p) => p !== dirsFile(ctx.runId));
    if (own.length > 0)
      out.removed.push(
        `removed through link.exec what the run left in the login directory: ${own.join(" ")}`,
      );
    const madeDirs = tagged("made");
    if (madeDirs.length > 0)
      out.removed.push(`and the directories its jobs made, emptied: ${madeDirs.join(" ")}`);
    for (const d of tagged("empty"))
      out.left.push({
        what: `${d}: the plugin's own directory, emptied of this run's entries`,
        command: `rmdir '${d}' (in the login directory), if the plugin has no further use for it`,
      });
    for (const p of kept)
      out.left.push({
        what: p,
        command: `rm -rf '${p}' (in the login directory, once no job of this run runs)`,
      });
  } catch (err) {
    out.left.push({
      what: `whatever the plugin keeps for the keys mu-check-${ctx.runId}-*: the cleanup could not run (${describeCall(err)})`,
    });
  } finally {
    await s?.close();
  }
  return out;
}

import { MuError, UnavailableError, UsageError } from "../errors.js";
import { refPart } from "../git/fetch-place.js";
import { checkoutOf, commitOf } from "../git/local.js";
import type { LinkHost } from "../hosts/link-host.js";
import { linkRun, notACheckout, type OpenLink, type RunResult } from "../seams/link.js";
import { pushRev } from "../seams/push.js";
import { shQuote as q } from "../sh-quote.js";
import { planted, TESTBED_BUILD } from "../testbed-plant.js";

// A spawn's site: with --worktree the agent works in a git worktree on the
// host, made from a commit of the caller's checkout. The commit is resolved
// here first (a bad --from is a refusal, before anything is written); the
// tree is made after the job record, and the record then owes a final
// collect: a fetch of the tree's HEAD back into the caller's checkout.

export const SITE_TIMEOUT_MS = 60_000;
/** Where a provider's machine keeps the repository trees are made from. */
const PROVIDER_REPO = "mu/repo";

export interface SitePlan {
  localRepo: string;
  sha: string;
  /** The host's repository, relative to its login directory (or absolute). */
  repo: string;
  tree: string;
  ws: string;
  name: string;
}

/** A path on the host as an absolute one for git -C, which moves the cwd. */
const onHost = (p: string) => (p.startsWith("/") ? q(p) : `"$PWD"/${q(p)}`);

export function planSite(
  cwd: string,
  h: LinkHost,
  host: string,
  from: string | undefined,
  ws: string,
  name: string,
): SitePlan {
  const localRepo = checkoutOf(cwd);
  if (localRepo === null) throw notACheckout(cwd);
  const rev = from ?? "HEAD";
  const sha = commitOf(localRepo, rev);
  if (sha === null) {
    throw new UsageError("spawn.from", "usage", `--from '${rev}' names no commit in ${localRepo}`, {
      hint: "give a branch, tag or sha that git rev-parse knows",
    });
  }
  const repo = siteRepo(h);
  if (!repo) {
    throw new UsageError(
      "spawn.worktree.repo",
      "usage",
      `host '${host}' has no --repo to make a worktree in`,
      {
        hint: `re-add it with --repo <path on the host>: mu host rm ${host}; mu host add ${host} --plugin ${h.reg.name} --repo <path>`,
      },
    );
  }
  return { localRepo, sha, repo, tree: `mu/trees/${ws}/${name}`, ws, name };
}

/** The host's repository trees are made from: a profile's --repo, a provider machine's own. */
export function siteRepo(h: LinkHost): string | null {
  return h.profile ? h.profile.repo : PROVIDER_REPO;
}

/** The ref a tree's commit that no ref named is kept under before a spawn takes its path. */
export const keptRef = (p: SitePlan, sha: string): string =>
  `refs/mu/kept/${refPart(p.ws)}/${refPart(p.name)}/${sha}`;

/**
 * Seeds the host's repository with the commit (push, or proof it is there)
 * and makes the tree. Returns the commit a tree found at its path held that
 * no ref named, now kept under keptRef, and the git directory that holds
 * that ref, if there was one.
 */
export async function makeSite(
  l: OpenLink,
  p: SitePlan,
): Promise<{ sha: string; in: string } | undefined> {
  if (l.link.push) await pushRev(l, p.localRepo, p.repo, p.sha, SITE_TIMEOUT_MS);
  else {
    const r = await linkRun(
      l,
      "link.exec",
      {
        script: `git -C ${onHost(p.repo)} rev-parse --verify --quiet ${q(`${p.sha}^{commit}`)}`,
        cwd: ".",
      },
      SITE_TIMEOUT_MS,
    );
    if (r.exitCode !== 0 || r.stdout.trim() !== p.sha) {
      throw new UnavailableError(
        "spawn.site.missing",
        "host",
        `${p.repo} on ${l.name} does not hold ${p.sha}, and the link cannot push it`,
        {
          hint: `push it there yourself, then spawn again`,
        },
      );
    }
  }
  let r: RunResult;
  try {
    r = await linkRun(
      l,
      "link.exec",
      {
        // One job per name, so a tree already at this path is a leftover: of
        // an attempt that never started, or of a close whose collect was done.
        // Its HEAD may be a commit made after that collect, which only the
        // tree names (its row gone with the line that said it stayed): a ref
        // keeps it before the tree goes, or nothing goes at all.
        script: [
          ...(TESTBED_BUILD && planted(l.io.ports.env, "tree-replaced-unkept") ? [] : keepHead(p)),
          `git -C ${onHost(p.repo)} worktree remove --force ${onHost(p.tree)} 2>/dev/null; rm -rf ${onHost(p.tree)}`,
          `git -C ${onHost(p.repo)} worktree prune`,
          `mkdir -p "$(dirname ${onHost(p.tree)})" && git -C ${onHost(p.repo)} worktree add --quiet --detach ${onHost(p.tree)} ${q(p.sha)}`,
        ].join("\n"),
        cwd: ".",
      },
      SITE_TIMEOUT_MS,
    );
  } catch (err) {
    // Sent and not answered: the script may have made the tree all the same.
    if (err instanceof MuError && NO_EXIT_CODE.has(err.code))
      throw new SiteInDoubt(p, l.name, err.message);
    throw err;
  }
  if (r.exitCode === null)
    throw new SiteInDoubt(p, l.name, `timed out after ${SITE_TIMEOUT_MS} ms`);
  if (r.exitCode !== 0) {
    throw new UnavailableError(
      "spawn.site.failed",
      "host",
      `cannot make the worktree ${p.tree} on ${l.name} (exit ${r.exitCode ?? "timed out"}: ${r.stderr.trim().split("\n")[0] ?? ""})`,
      {
        hint: "look at the host's repository with mu host exec, then spawn again",
      },
    );
  }
  const kept = /^kept ([0-9a-f]+) in (.+)$/m.exec(r.stdout);
  return kept ? { sha: kept[1] as string, in: kept[2] as string } : undefined;
}

/**
 * The lines that keep the HEAD of a tree at the path under keptRef when no
 * ref holds it, before that tree is removed; git's reason, and nothing
 * removed, when the ref cannot be written. Asked of the tree itself, so the
 * ref lands in the repository that holds the commit (a tree left by an
 * earlier --repo of the host is another one's), which the line names.
 */
const keepHead = (p: SitePlan): string[] => {
  const t = onHost(p.tree);
  return [
    `if [ -e ${t}/.git ] && h=$(git -C ${t} rev-parse --verify --quiet HEAD) && [ -z "$(git -C ${t} for-each-ref --count=1 --contains "$h" 2>/dev/null)" ]; then`,
    `  e=$(git -C ${t} update-ref ${q(keptRef(p, ""))}"$h" "$h" 2>&1) || { printf 'its HEAD %s is named by no ref and could not be kept (%s)\\n' "$h" "$(printf '%s' "$e" | head -n 1)" >&2; exit 3; }`,
    `  echo "kept $h in $(git -C ${t} rev-parse --git-common-dir)"`,
    `fi`,
  ];
};

/** The codes of a link call that was sent and came back with no exit code. */
const NO_EXIT_CODE = new Set(["call.unknown", "call.no-answer"]);

/**
 * The tree script went out and no exit code came back, so the tree may stand
 * on the host: the spawn's record stays, as a spawn killed there leaves it,
 * for `mu state` to list and a close to take back with its tree.
 */
export class SiteInDoubt extends UnavailableError {
  constructor(p: SitePlan, host: string, why: string) {
    super(
      "spawn.site.in-doubt",
      "host",
      `the worktree ${p.tree} on ${host} may have been made (${why})`,
      {
        hint: "mu state lists the spawn: spawn it again, or close it to take it back and remove the tree",
      },
    );
  }
}

/**
 * Removes a collected tree, but only while its HEAD is still the commit the
 * collect pinned (or, for a spawn's tree, the one it was made from): a tree
 * that moved on since holds work no ref names yet, so it stays and the error
 * says why. A tree already gone is fine: false.
 */
export async function removeCollectedSite(
  l: OpenLink,
  repo: string,
  tree: string,
  sha: string,
  /** What `sha` is, for the line about a tree that moved on. */
  shaIs = "the collected commit",
): Promise<boolean> {
  const t = onHost(tree);
  const r = await linkRun(
    l,
    "link.exec",
    {
      script: [
        `if [ ! -e ${t} ]; then echo gone; exit 0; fi`,
        `if [ -e ${t}/.git ]; then h=$(git -C ${t} rev-parse --verify --quiet HEAD) || h=; else h=; fi`,
        `if [ -n "$h" ] && [ "$h" != ${q(sha)} ]; then echo "its HEAD is now $h, not "${q(shaIs)} >&2; exit 3; fi`,
        `git -C ${onHost(repo)} worktree remove --force ${t} 2>/dev/null || rm -rf ${t}`,
      ].join("\n"),
      cwd: ".",
    },
    SITE_TIMEOUT_MS,
  );
  if (r.exitCode !== 0) {
    const why = r.stderr.trim().split("\n")[0];
    if (r.exitCode === 3 && why) throw new TreeMovedOn(why);
    throw new Error(why || (r.exitCode === null ? "timed out" : `exit ${r.exitCode}`));
  }
  return r.stdout.trim() !== "gone";
}

/** The tree holds a commit newer than the collected one: it stays for good, not to be tried again. */
export class TreeMovedOn extends Error {}

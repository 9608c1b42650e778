import { resolve } from "node:path";
import type { Io } from "../cli/io.js";
import { UsageError } from "../errors.js";
import { fetchedRef } from "../git/fetch-place.js";
import { checkoutOf, commitOf } from "../git/local.js";
import { fetchInto, loadLinkHost, notACheckout, openLink } from "../seams/link.js";
import { type LinkTimeout, TIMEOUT_FLAG, timeoutOption } from "../seams/link-timeout.js";
import { pushRev } from "../seams/push.js";
import { withPlugins } from "./with-plugins.js";

// mu host fetch and mu host push: the link's git moves by hand, the same
// calls a spawn and a collect make, so a user can try a plugin host's git
// path before an agent depends on it.

function localCheckout(io: Io, into: string | undefined): string {
  const from = resolve(io.ports.cwd, into ?? ".");
  const top = checkoutOf(from);
  if (top === null) throw notACheckout(from);
  return top;
}

export async function hostFetch(
  io: Io,
  name: string,
  opts: { from?: string; into?: string } & LinkTimeout,
): Promise<void> {
  const timeoutMs = timeoutOption(opts, "fetch", io);
  const localRepo = localCheckout(io, opts.into);
  const h = await loadLinkHost(io, name);
  const remoteCwd = opts.from ?? h.profile?.repo ?? ".";
  const ref = fetchedRef(name);
  const sha = await withPlugins(io, async (sup) =>
    fetchInto(await openLink(io, sup, name, h), remoteCwd, localRepo, ref, timeoutMs, TIMEOUT_FLAG),
  );
  io.out(`fetched ${sha} from ${name}:${remoteCwd} into ${localRepo} (${ref})\n`);
}

export async function hostPush(
  io: Io,
  name: string,
  opts: { rev?: string; to?: string } & LinkTimeout,
): Promise<void> {
  const timeoutMs = timeoutOption(opts, "push", io);
  const localRepo = localCheckout(io, undefined);
  const rev = opts.rev ?? "HEAD";
  const sha = commitOf(localRepo, rev);
  if (sha === null) {
    throw new UsageError("host.push.rev", "usage", `'${rev}' names no commit in ${localRepo}`, {
      hint: "give a branch, tag or sha that git rev-parse knows",
    });
  }
  const h = await loadLinkHost(io, name);
  const remoteRepo = opts.to ?? h.profile?.repo;
  if (remoteRepo === undefined || remoteRepo === null) {
    throw new UsageError("host.push.to", "usage", `host '${name}' has no --repo to push to`, {
      hint: `name one: mu host push ${name} --to <path on the host>`,
    });
  }
  await withPlugins(io, async (sup) =>
    pushRev(await openLink(io, sup, name, h), localRepo, remoteRepo, sha, timeoutMs, TIMEOUT_FLAG),
  );
  io.out(`${name}:${remoteRepo} holds ${sha}\n`);
}

import type { InitializeResult } from "../protocol/declaration.js";

// Where the suite's link calls go. A plugin whose link reaches one fixed
// backend takes a plain host name, as a `mu host add --plugin` profile sends;
// a provider's link reaches only machines it acquired, named by handle. With
// --host the author aims the link checks at a host mu already knows.

export const CHECK_HOST = "mu-check";

export interface Target {
  host: { name: string; instance?: string; handle?: string };
}

/** A host the link checks run on, and the repository there a fetch may read. */
export interface LinkPlace {
  target: Target;
  /** A profile's --repo: fetched from, never written to. */
  root?: string;
  /** Why the checks go there, for the pass lines. */
  label: string;
}

export function profileTarget(hello: InitializeResult): Target {
  return { host: { name: CHECK_HOST, instance: hello.instance } };
}

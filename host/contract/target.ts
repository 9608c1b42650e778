import type { InitializeResult } from "../protocol/declaration.js";

// Where the suite's link calls go. A plugin whose link reaches one fixed
// backend takes a plain host name, as a `mu host add --plugin` profile sends;
// a provider's link reaches only machines it acquired, named by handle.

export const CHECK_HOST = "mu-check";

export interface Target {
  host: { name: string; instance?: string; handle?: string };
}

export function profileTarget(hello: InitializeResult): Target {
  return { host: { name: CHECK_HOST, instance: hello.instance } };
}

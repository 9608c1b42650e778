import { spawn } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import type { Io } from "../host/cli/io.js";
import { forgetStuck } from "../host/effects/forget.js";
import { type Intent, intentsFor, markResolver, writeIntent } from "../host/effects/journal.js";
import { unresolved } from "../host/effects/unresolved.js";
import { RefusedError } from "../host/errors.js";
import { realPorts } from "../host/ports/real.js";
import { openStore } from "../host/store/index.js";
import { muError, tempState } from "./helpers.js";

// Forget's last step is one commit that deletes the intent. Between the
// rules giving up and that commit, another mu may claim the intent as its
// resolver and still be settling it: the commit must see that claim and
// leave the record alone (exit 4), not delete what another mu is resolving.

const states: ReturnType<typeof tempState>[] = [];
const children: ReturnType<typeof spawn>[] = [];
afterEach(() => {
  for (const c of children.splice(0)) c.kill("SIGKILL");
  for (const s of states.splice(0)) s.done();
});

async function setup() {
  const s = tempState();
  states.push(s);
  const ports = realPorts({ PATH: process.env.PATH, ...s.env });
  const lines: string[] = [];
  const io: Io = { ports, out: (t) => lines.push(t), err: (t) => lines.push(t) };
  const store = openStore(ports);
  const id = await store.write((db) =>
    writeIntent(db, {
      subject: "host:h1",
      method: "host.acquire",
      plugin: "sim",
      key: "h1-abc",
      params: { key: "h1-abc" },
      instance: "sim-1",
      pgid: 0,
      // A writer long gone: no live process has this start time.
      writer: { pid: process.pid, start: "not-this-process" },
      writtenAt: 0,
    }),
  );
  const intent = (await store.read((db) => intentsFor(db, "host:h1")))[0] as Intent;
  expect(intent.id).toBe(id);
  return { io, ports, store, intent, lines };
}

/** A live process that is not this one: another mu, as far as liveness can tell. */
async function anotherMu(ports: ReturnType<typeof realPorts>) {
  const child = spawn("sleep", ["60"], { stdio: "ignore" });
  children.push(child);
  await new Promise((ok) => child.once("spawn", ok));
  const pid = child.pid ?? 0;
  const start = ports.liveness.startOf(pid);
  expect(start).not.toBeNull();
  return { pid, start: String(start) };
}

describe("forget's commit", () => {
  it("refuses (exit 4) when another live mu claimed the intent after the rules gave up", async () => {
    const { io, ports, store, intent } = await setup();
    const other = await anotherMu(ports);
    let dropped = false;
    const err = await muError(
      forgetStuck(io, store, {
        label: "host",
        what: "the acquire of h1",
        noun: "an acquire",
        intent,
        // The rules give up on it for good; meanwhile another mu claims it.
        resolve: async () => {
          await store.write((db) => markResolver(db, intent, other));
          throw unresolved(intent, "acquire.dedupe.expired", "window passed", "x", "forget");
        },
        later: "mu host status h1",
        look: "mu host status h1",
        drop: () => {
          dropped = true;
        },
      }),
    );
    expect(err).toBeInstanceOf(RefusedError);
    expect(err.exit).toBe(4);
    expect(err.line()).toMatch(/in the hands of mu pid \d+ \(guard\.resolver-alive\)/);
    expect(dropped).toBe(false);
    expect(await store.read((db) => intentsFor(db, "host:h1"))).toHaveLength(1);
  });

  it("forgets when the claim left on it is a dead mu's", async () => {
    const { io, store, intent, lines } = await setup();
    await store.write((db) => markResolver(db, intent, { pid: process.pid, start: "gone" }));
    const { row } = await forgetStuck(io, store, {
      label: "host",
      what: "the acquire of h1",
      noun: "an acquire",
      intent,
      resolve: async () => {
        throw unresolved(intent, "acquire.dedupe.expired", "window passed", "x", "forget");
      },
      later: "mu host status h1",
      look: "mu host status h1",
      drop: () => undefined,
    });
    expect(row).toBe("acquire.dedupe.expired");
    expect(await store.read((db) => intentsFor(db, "host:h1"))).toHaveLength(0);
    expect(lines.join("")).toMatch(/forgotten \(acquire\.dedupe\.expired\)\n$/);
  });
});

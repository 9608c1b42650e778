import { describe, expect, it } from "vitest";
import { checkLoadRules } from "../host/plugin/load-rules.js";
import { protocolChecks } from "../host/protocol/checks.js";
import type { InitializeResult, Seams } from "../host/protocol/declaration.js";
import { schemaDigest as hostDigest } from "../host/protocol/schema.js";
import { schemaDigest, seams, VERSION } from "../plugins/ssh/declaration.js";
import { MAX_SCRIPT_BYTES } from "../plugins/ssh/link.js";

// What mu-plugin-ssh declares at the handshake is what mu's exactly-once and
// replay decisions rest on, so every field is pinned here to what the plugin
// does, and the whole answer must pass the load rules mu applies to it:
// - the link kills the remote process group on a timeout (remoteOnTimeout
//   stopped) and can prove a tree quiet (quiescence provable): the ssh link
//   and outage tests prove both against a real sshd;
// - job.start keeps a lookup and a fence key on the remote side, with 60 s to
//   let a start land: the caller-gone and outage tests prove them;
// - the channel keeps exact receipts and dedupe in the remote inbox, cannot
//   steer or fence, and emulates an interrupt by a keystroke.

const handshake = (withAgents: boolean, name: string): InitializeResult => ({
  protocol: 1,
  plugin: { name, version: VERSION },
  instance: "me@127.0.0.1:22",
  schema: schemaDigest(),
  seams: seams(withAgents, name) as Seams,
});

const LINK = {
  fetch: true,
  push: true,
  slots: "self",
  remoteOnTimeout: "stopped",
  quiescence: "provable",
  maxScriptBytes: MAX_SCRIPT_BYTES,
  checks: ["template", "reach"],
};

describe("what mu-plugin-ssh declares", () => {
  it("digests the very schema file mu ships", () => {
    expect(schemaDigest()).toBe(hostDigest());
    expect(schemaDigest()).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it("without --harness: a link only, which mu's load rules accept for a link registration", () => {
    const res = handshake(false, "ssh");
    expect(res.seams).toEqual({ link: LINK });
    expect(protocolChecks().initializeErrors(res)).toEqual([]);
    expect(checkLoadRules(res, { name: "ssh", digest: hostDigest(), needs: ["link"] })).toBeNull();
  });

  it("with --harness: link, job and a channel named after the plugin, each as the plugin behaves", () => {
    const res = handshake(true, "box2");
    expect(res.seams).toEqual({
      link: LINK,
      job: {
        kind: "ssh",
        view: "detached",
        handle: "pane",
        start: { lookup: true, fenceKey: true, inFlightMs: 60_000 },
        channel: "box2",
        checks: ["agent"],
      },
      channel: {
        name: "box2",
        caps: {
          fence: "none",
          receipt: "exact",
          dedupe: "exact",
          steer: "none",
          interrupt: "emulated",
          fresh: "in-place",
          answer: false,
          command: false,
          watch: "stream",
          settleText: "truncated",
        },
      },
    });
    expect(protocolChecks().initializeErrors(res)).toEqual([]);
    expect(
      checkLoadRules(res, {
        name: "box2",
        digest: hostDigest(),
        needs: ["link", "job", "channel"],
      }),
    ).toBeNull();
  });

  it("two registrations of the plugin each name a channel of their own", () => {
    const a = seams(true, "a") as { job: { channel: string }; channel: { name: string } };
    const b = seams(true, "b") as { job: { channel: string }; channel: { name: string } };
    expect([a.job.channel, a.channel.name, b.job.channel, b.channel.name]).toEqual([
      "a",
      "a",
      "b",
      "b",
    ]);
  });
});

import { describe, expect, it } from "vitest";
import { classify } from "../plugins/ssh/ssh.js";

// What mu-plugin-ssh answers when ssh itself fails (exit 255, or git's report
// of it): the error class decides what mu does next (a person fixes a
// `human` one, mu tries a `retryable` one again, an `unknown-outcome` one
// must be looked up), so each of OpenSSH's own messages is named here with
// the class it gets, as its client prints them.

const kindOf = (stderr: string, started = false) => classify(stderr, "box", started).kind;

describe("mu-plugin-ssh's reading of ssh's failures", () => {
  it("a refused login is a person's to fix, with the key's remedy", () => {
    for (const stderr of [
      "root@127.0.0.1: Permission denied (publickey,password).",
      "Received disconnect from 127.0.0.1 port 22:2: Too many authentication failures",
      "sign_and_send_pubkey: no mutual signature supported\nmu@box: Permission denied (publickey).",
      "sign_and_send_pubkey: no mutual signature supported",
    ])
      expect([stderr, kindOf(stderr), kindOf(stderr, true)]).toEqual([stderr, "human", "human"]);
    const e = classify("root@127.0.0.1: Permission denied (publickey).\n", "box", false);
    expect(e.message).toBe(
      "mu-plugin-ssh: ssh login to box refused: root@127.0.0.1: Permission denied (publickey).",
    );
    expect(e.remedy).toBe(
      "install the plugin's public key in the remote authorized_keys, or pass -i KEY",
    );
  });

  it("a host key not trusted is a person's to fix, with ssh-keyscan named", () => {
    for (const stderr of [
      "Host key verification failed.",
      "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@\n@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @",
      "No ED25519 host key is known for [127.0.0.1]:2222 and you have requested strict checking.\nHost key verification failed.",
      // The patterns' own variants: any case, and a key named as not known.
      "warning: remote host identification has changed",
      "host key for box not known",
    ])
      expect([stderr, kindOf(stderr)]).toEqual([stderr, "human"]);
    const e = classify("Host key verification failed.", "box", false);
    expect(e.message).toBe(
      "mu-plugin-ssh: box's host key is not trusted: Host key verification failed.",
    );
    expect(e.remedy).toBe(
      "verify the host's key and add it to the known_hosts file ssh uses (ssh-keyscan)",
    );
  });

  it("a destination or option ssh cannot use is permanent, with the registration to fix", () => {
    for (const stderr of [
      "ssh: Could not resolve hostname nohost.invalid: Name or service not known",
      "ssh: nohost.invalid: Name or service not known",
      "command-line line 0: Bad configuration option: nosuchoption",
      'command-line line 0: Unsupported option "rsaauthentication"',
    ])
      expect([stderr, kindOf(stderr), kindOf(stderr, true)]).toEqual([
        stderr,
        "permanent",
        "permanent",
      ]);
    const e = classify(
      "ssh: Could not resolve hostname x: Name or service not known",
      "box",
      false,
    );
    expect(e.message).toBe(
      "mu-plugin-ssh: cannot reach box: ssh: Could not resolve hostname x: Name or service not known",
    );
    expect(e.remedy).toBe("fix --dest, -F or -o in the plugin's registration");
  });

  it("a connection that failed before anything ran is retryable; the same once a run started is an unknown outcome", () => {
    for (const stderr of [
      "ssh: connect to host 127.0.0.1 port 1: Connection refused",
      "kex_exchange_identification: read: Connection reset by peer",
      "ssh: connect to host 10.0.0.1 port 22: Connection timed out",
      "ssh: connect to host 10.0.0.1 port 22: No route to host",
      "ssh: connect to host 10.0.0.1 port 22: Network is unreachable",
      "Connection closed by 127.0.0.1 port 2222",
      "kex_exchange_identification: Connection closed by remote host",
      "client_loop: send disconnect: Broken pipe",
      "Connection to 127.0.0.1 closed by remote host.",
    ]) {
      expect([stderr, kindOf(stderr, false)]).toEqual([stderr, "retryable"]);
      expect([stderr, kindOf(stderr, true)]).toEqual([stderr, "unknown-outcome"]);
    }
    const e = classify("ssh: connect to host 127.0.0.1 port 1: Connection refused", "box", false);
    expect(e.message).toBe(
      "mu-plugin-ssh: cannot connect to box: ssh: connect to host 127.0.0.1 port 1: Connection refused",
    );
    expect(e.remedy).toBeUndefined();
  });

  it("anything else is an unknown outcome: the run may have happened", () => {
    const e = classify("mux_client_request_session: read from master failed", "box", false);
    expect(e.kind).toBe("unknown-outcome");
    expect(e.message).toBe(
      "mu-plugin-ssh: the connection to box was lost: mux_client_request_session: read from master failed",
    );
    expect(e.remedy).toBeUndefined();
  });

  it("the message quotes the first line that is not blank, trimmed and cut at 300 characters", () => {
    expect(classify("\n   \n  first words  \nsecond", "box", true).message).toBe(
      "mu-plugin-ssh: the connection to box was lost: first words",
    );
    expect(classify("", "box", true).message).toBe(
      "mu-plugin-ssh: the connection to box was lost: ssh failed",
    );
    const long = classify(`x${"y".repeat(400)}`, "box", true).message;
    expect(long).toBe(`mu-plugin-ssh: the connection to box was lost: x${"y".repeat(299)}`);
  });

  it("a refusal outranks what else ssh said", () => {
    expect(kindOf("Connection closed by 127.0.0.1 port 22\nPermission denied (publickey).")).toBe(
      "human",
    );
    expect(kindOf("Connection refused\nHost key verification failed.")).toBe("human");
    expect(kindOf("Connection refused\nBad configuration option: x")).toBe("permanent");
  });
});

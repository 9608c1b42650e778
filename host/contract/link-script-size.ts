import { oversize } from "../plugin/request-size.js";
import type { LinkSeam } from "../protocol/declaration.js";
import { execIn } from "./link-cwd.js";
import { shown } from "./link-roundtrip.js";
import type { Session } from "./session.js";
import type { LinkPlace } from "./target.js";
import { CheckFailed, describeCall, type Outcome, pass } from "./verdict.js";

// maxScriptBytes read back: a script of exactly that many bytes must run as
// sent, byte for byte. A plugin that hands the script to sh as one argument
// meets the kernel's limit on a single argument (128 KiB on Linux) right at
// the common declaration. One byte more may be refused, or run whole.

const END = "MU_CHECK_END";
const HEAD = `cksum <<'${END}'\n`;
const FOOT = `${END}\n`;
const SIZE_MS = 30_000;

/** POSIX cksum: CRC-32 (0x04C11DB7, no reflection) over the bytes, then their length. */
export function posixCksum(data: Buffer): string {
  let crc = 0;
  const step = (byte: number) => {
    crc ^= byte << 24;
    for (let i = 0; i < 8; i++) crc = crc & 0x80000000 ? (crc << 1) ^ 0x04c11db7 : crc << 1;
    crc >>>= 0;
  };
  for (const b of data) step(b);
  for (let n = data.length; n > 0; n = Math.floor(n / 256)) step(n % 256);
  return `${(~crc >>> 0).toString()} ${data.length}`;
}

/** A script of exactly `bytes` bytes that prints the cksum of its own here-document. */
export function sizedScript(bytes: number, hex: string): { script: string; want: string } {
  let room = bytes - HEAD.length - FOOT.length;
  const src = hex.repeat(Math.ceil(128 / hex.length) + 1);
  const lines: string[] = [];
  for (let i = 0; room > 0; i++) {
    const n = Math.min(64, room);
    const from = (i * 7) % hex.length;
    lines.push(`${src.slice(from, from + n - 1)}\n`);
    room -= n;
  }
  const data = lines.join("");
  return { script: `${HEAD}${data}${FOOT}`, want: posixCksum(Buffer.from(data)) };
}

export async function linkScriptSize(
  s: Session,
  place: LinkPlace,
  link: LinkSeam,
  hex: string,
): Promise<Outcome> {
  const max = link.maxScriptBytes;
  const fits = (script: string) =>
    oversize("link.exec", { target: place.target, script, cwd: ".", timeoutMs: SIZE_MS }) ===
    undefined;
  const at = sizedScript(max, hex);
  if (!fits(at.script))
    return pass(
      `maxScriptBytes ${max}: a script that long cannot fit a 1 MiB request line, so mu never sends one; not tried`,
    );
  const r = await execIn(s, place, at.script, ".", SIZE_MS);
  if (r.exitCode !== 0 || r.stdout.trim() !== at.want)
    throw new CheckFailed(
      r.exitCode === 0
        ? `a script of exactly maxScriptBytes (${max} bytes) did not arrive as sent: the cksum of its here-document came back as '${r.stdout.trim()}', not '${at.want}'`
        : `a script of exactly maxScriptBytes (${max} bytes) answered exitCode ${r.exitCode}; was it passed as one argument?`,
      [shown(r)],
    );
  const over = sizedScript(max + 1, hex);
  if (!fits(over.script))
    return pass(`${place.label}: a script of exactly ${max} bytes ran byte for byte`);
  let o: { exitCode: number | null; stdout: string };
  try {
    o = (await s.call(
      "link.exec",
      { target: place.target, script: over.script, cwd: ".", timeoutMs: SIZE_MS },
      SIZE_MS + 5_000,
    )) as typeof o;
  } catch (err) {
    return pass(
      `${place.label}: a script of exactly ${max} bytes ran byte for byte; one byte more was refused (${describeCall(err)})`,
    );
  }
  if (o.exitCode !== 0 || o.stdout.trim() !== over.want)
    throw new CheckFailed(
      `a script one byte over maxScriptBytes was neither refused nor run as sent (exitCode ${o.exitCode})`,
      [shown(o as Parameters<typeof shown>[0])],
    );
  return pass(
    `${place.label}: a script of exactly ${max} bytes ran byte for byte; one byte more ran whole too`,
  );
}

/** MllpFrameReader returns the same payloads however the stream is cut, and refuses bad framing. */
import { assert, assertEquals } from "../../../tests/assert.ts";
import { encodeMllpFrame, MllpFrameError, MllpFrameReader } from "./frame.ts";
import { cpuGrowth } from "../../../tests/support/cpu_scaling.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function join(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

function frameError(fn: () => unknown): MllpFrameError {
  try {
    fn();
  } catch (err) {
    assert(err instanceof MllpFrameError, `not an MllpFrameError: ${err}`);
    return err;
  }
  throw new Error("no error thrown");
}

const A = "MSH|^~\\&|SEND|FAC|RECV|FAC|20240101||ADT^A01|1|P|2.5\rPID|1||123\r";
const B = "MSH|^~\\&|SEND|FAC|RECV|FAC|20240101||ORU^R01|2|P|2.5\r";

Deno.test("encodeMllpFrame wraps the payload in <VT> … <FS><CR>", () => {
  assertEquals([...encodeMllpFrame(enc.encode("ab"))], [0x0b, 0x61, 0x62, 0x1c, 0x0d]);
});

Deno.test("two frames come out the same for every cut of the stream", () => {
  const stream = join(encodeMllpFrame(enc.encode(A)), encodeMllpFrame(enc.encode(B)));
  for (let cut = 0; cut <= stream.byteLength; cut++) {
    for (const second of [cut, Math.min(stream.byteLength, cut + 3)]) {
      const reader = new MllpFrameReader({ maxFrameBytes: 1024 });
      const got = [
        ...reader.push(stream.subarray(0, cut)),
        ...reader.push(stream.subarray(cut, second)),
        ...reader.push(stream.subarray(second)),
      ].map((p) => dec.decode(p));
      assertEquals(got, [A, B], `cut at ${cut}/${second}`);
      assertEquals(reader.pending, 0);
      assertEquals(reader.inFrame, false);
    }
  }
});

Deno.test("byte-at-a-time delivery and CR/LF between frames", () => {
  const stream = join(
    encodeMllpFrame(enc.encode(A)),
    enc.encode("\r\n"),
    encodeMllpFrame(enc.encode(B)),
    enc.encode("\n"),
  );
  const reader = new MllpFrameReader({ maxFrameBytes: 1024 });
  const got: string[] = [];
  for (let i = 0; i < stream.byteLength; i++) {
    for (const p of reader.push(stream.subarray(i, i + 1))) got.push(dec.decode(p));
  }
  assertEquals(got, [A, B]);
});

Deno.test("pending counts the unfinished frame's payload; the caller's buffer may be reused", () => {
  const reader = new MllpFrameReader({ maxFrameBytes: 1024 });
  const buf = new Uint8Array(4);
  buf.set([0x0b, 0x41, 0x42, 0x43]);
  assertEquals(reader.push(buf), []);
  assertEquals(reader.pending, 3);
  assertEquals(reader.inFrame, true);
  buf.set([0x44, 0x1c, 0x0d, 0x0d]);
  const [p] = reader.push(buf);
  assertEquals(dec.decode(p), "ABCD");
  assertEquals(reader.pending, 0);
});

Deno.test("an empty frame is an empty payload", () => {
  const reader = new MllpFrameReader({ maxFrameBytes: 8 });
  assertEquals(reader.push(encodeMllpFrame(new Uint8Array(0))).map((p) => p.byteLength), [0]);
});

Deno.test("bytes before a start block: no_start_block", () => {
  const reader = new MllpFrameReader({ maxFrameBytes: 1024 });
  const err = frameError(() => reader.push(enc.encode(A)));
  assertEquals(err.code, "no_start_block");
  // The reader stays failed.
  assertEquals(
    frameError(() => reader.push(encodeMllpFrame(enc.encode(B)))).code,
    "no_start_block",
  );
});

Deno.test("binary garbage is refused at its first byte", () => {
  const reader = new MllpFrameReader({ maxFrameBytes: 1024 });
  const garbage = new Uint8Array(256).map((_, i) => (i * 7919 + 13) & 0xff);
  garbage[0] = 0xff;
  assertEquals(frameError(() => reader.push(garbage)).code, "no_start_block");
});

Deno.test("a start block inside a frame (the frame before was truncated): garbage", () => {
  const reader = new MllpFrameReader({ maxFrameBytes: 1024 });
  const truncated = encodeMllpFrame(enc.encode(A)).subarray(0, 20);
  assertEquals(reader.push(truncated), []);
  const err = frameError(() => reader.push(encodeMllpFrame(enc.encode(B))));
  assertEquals(err.code, "garbage");
  assert(err.message.includes("cut short"), err.message);
});

Deno.test("<FS> not followed by <CR>: garbage", () => {
  const reader = new MllpFrameReader({ maxFrameBytes: 1024 });
  assertEquals(
    reader.push(join(new Uint8Array([0x0b]), enc.encode("MSH|"), new Uint8Array([0x1c]))),
    [],
  );
  assertEquals(frameError(() => reader.push(enc.encode("X"))).code, "garbage");
});

Deno.test("a frame over the limit throws too_large before its end, with its head", () => {
  const reader = new MllpFrameReader({ maxFrameBytes: 100 });
  const big = encodeMllpFrame(enc.encode(B + "OBX|" + "x".repeat(1000) + "\r"));
  assertEquals(reader.push(big.subarray(0, 60)), []);
  const err = frameError(() => reader.push(big.subarray(60, 200)));
  assertEquals(err.code, "too_large");
  assert(err.head !== undefined && dec.decode(err.head).startsWith(B), "head keeps the MSH");
  assertEquals(reader.pending, 0);
  // Exactly at the limit is accepted.
  const ok = new MllpFrameReader({ maxFrameBytes: 4 });
  assertEquals(ok.push(encodeMllpFrame(enc.encode("abcd"))).length, 1);
});

Deno.test("a frame in 64 KiB chunks is read in linear time", () => {
  const readAll = (size: number) => {
    const frame = encodeMllpFrame(new Uint8Array(size).fill(0x41));
    return () => {
      const reader = new MllpFrameReader({ maxFrameBytes: 16 * 1024 * 1024 });
      const out: Uint8Array[] = [];
      for (let at = 0; at < frame.byteLength; at += 65536) {
        out.push(...reader.push(frame.subarray(at, at + 65536)));
      }
      assertEquals(out.length, 1);
      assertEquals(out[0].byteLength, size);
    };
  };
  // Ten times the bytes: about 10 when linear, about 100 if each chunk copied what came before.
  // Timed in this thread's CPU time: waiting for a core on a busy machine does not count.
  const { ratio, linear } = cpuGrowth(readAll(512 * 1024), readAll(5 * 1024 * 1024), 40, 3);
  assert(linear, `5 MiB took ${ratio.toFixed(1)} times 512 KiB`);
});

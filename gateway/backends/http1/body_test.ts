import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import {
  type BodyDecoder,
  ChunkedDecoder,
  CloseDecoder,
  LengthDecoder,
  type ReadBuffer,
} from "./body.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** Feeds `wire` to `body` in pieces of `step` bytes; returns the decoded text and what was left. */
function feed(body: BodyDecoder, wire: string, step: number): { text: string; rest: string } {
  const bytes = encoder.encode(wire);
  const input: ReadBuffer = { buf: new Uint8Array(bytes.length), start: 0, end: 0 };
  let text = "";
  for (let offset = 0; offset < bytes.length && !body.done; offset += step) {
    input.buf.set(bytes.subarray(offset, offset + step), input.end);
    input.end += Math.min(step, bytes.length - offset);
    const chunk = body.take(input);
    if (chunk) text += decoder.decode(chunk);
  }
  return { text, rest: decoder.decode(input.buf.subarray(input.start, input.end)) };
}

const CHUNKED = "5;name=value\r\nhello\r\n7 ; x\r\n, world\r\n0\r\nX-Trailer: 1\r\nY: 2\r\n\r\n";

Deno.test("chunked: extensions and trailers, split at every byte", () => {
  for (let step = 1; step <= CHUNKED.length; step++) {
    const body = new ChunkedDecoder(1024);
    const { text, rest } = feed(body, CHUNKED + "NEXT", step);
    assertEquals(text, "hello, world", `step ${step}`);
    assert(body.done, `step ${step}`);
    assert("NEXT".startsWith(rest), `step ${step}: ${rest}`);
  }
});

Deno.test("chunked: several chunks in one buffer become one piece; bare LF accepted", () => {
  const body = new ChunkedDecoder(1024);
  const input: ReadBuffer = {
    buf: encoder.encode("3\r\nabc\r\n3\ndef\n0\n\n"),
    start: 0,
    end: 0,
  };
  input.end = input.buf.length;
  assertEquals(decoder.decode(body.take(input)!), "abcdef");
  assert(body.done);
  assertEquals(input.start, input.end);
});

Deno.test("chunked: malformed input is a protocol error", async () => {
  const cases: [string, RegExp][] = [
    ["zz\r\n", /not a hex number/],
    ["5x\r\nhello\r\n", /not a hex number/],
    ["\r\n", /not a hex number/],
    ["-1\r\n", /not a hex number/],
    ["3\r\nabcXY", /missing CRLF/],
    ["fffffffffffffff\r\n", /chunk size too large/],
    ["1;" + "x".repeat(5000), /chunk size line too long/],
    ["0\r\n" + "X: " + "y".repeat(2000) + "\r\n", /trailer section too long/],
  ];
  for (const [wire, pattern] of cases) {
    const error = await assertRejects(
      () => feed(new ChunkedDecoder(1024), wire, wire.length),
      pattern,
    );
    assert(error.message.startsWith("invalid chunked response body"), error.message);
  }
  await assertRejects(() => new ChunkedDecoder(1024).eof(), /closed before the last chunk/);
});

Deno.test("length: takes exactly its bytes, leaves the rest, truncated at EOF", async () => {
  const body = new LengthDecoder(5);
  const { text, rest } = feed(body, "helloEXTRA", 3);
  assertEquals([text, body.done], ["hello", true]);
  assert("EXTRA".includes(rest));
  assert(new LengthDecoder(0).done);
  const short = new LengthDecoder(10);
  feed(short, "abc", 3);
  await assertRejects(() => short.eof(), /truncated: the connection closed after 3 of 10 bytes/);
});

Deno.test("close-delimited: everything until EOF, never reusable", () => {
  const body = new CloseDecoder();
  const { text } = feed(body, "all of it", 4);
  assertEquals(text, "all of it");
  assert(!body.done);
  body.eof();
  assert(body.done && !body.reusable);
});

/** Client bodies read within their limits: 408 past the deadline, 499 when the client left. */
import { assertEquals, assertRejects } from "../tests/assert.ts";
import { boundedClientBody, readChunks, resetAwareBody } from "./body_read.ts";
import { clientBodyBroke, GatewayError, toGatewayError } from "./errors.ts";

const tooLarge = () => new GatewayError(413, "payload_too_large", "too large");

/** A stream of `chunks`, then the end, or `fail` thrown, or nothing more for ever. */
function source(chunks: string[], end: "close" | Error | "never" = "close") {
  let i = 0;
  return new ReadableStream<Uint8Array>({
    pull(controller) {
      if (i < chunks.length) return controller.enqueue(new TextEncoder().encode(chunks[i++]));
      if (end === "close") return controller.close();
      if (end instanceof Error) return controller.error(end);
      return new Promise(() => {});
    },
  }, { highWaterMark: 0 });
}

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  return await new Response(stream).text();
}

async function code(stream: ReadableStream<Uint8Array>): Promise<string> {
  const err = await assertRejects(() => text(stream));
  return toGatewayError(err).code;
}

Deno.test("client body errors: the runtime's report of a client gone is 499, nothing else is", () => {
  const http = new Deno.errors.Http("error reading a body from connection");
  const gone = new Deno.errors.BadResource(
    "Cannot read request body as underlying resource unavailable",
  );
  assertEquals(clientBodyBroke(http)?.status, 499);
  assertEquals(clientBodyBroke(gone)?.code, "client_closed");
  assertEquals(clientBodyBroke(new Error("write failed", { cause: http }))?.status, 499);
  assertEquals(clientBodyBroke(new Deno.errors.BadResource("Bad resource ID")), undefined);
  assertEquals(clientBodyBroke(new TypeError("error reading a body from connection")), undefined);
  assertEquals(toGatewayError(http).code, "client_closed");
  assertEquals(toGatewayError(new Error("boom")).code, "internal_error");
});

Deno.test("readChunks: a client body that broke off is 499", async () => {
  const broke = source(["ab"], new Deno.errors.Http("connection reset"));
  const err = await assertRejects(() => readChunks(broke, 100, () => {}, tooLarge, 1_000));
  assertEquals((err as GatewayError).status, 499);
});

Deno.test("boundedClientBody: whole within the deadline, 408 past it, 499 when the client left", async () => {
  assertEquals(await text(boundedClientBody(source(["a", "b"]), 1_000)), "ab");
  assertEquals(await code(boundedClientBody(source(["a"], "never"), 50)), "request_body_timeout");
  const broke = source(["a"], new Deno.errors.Http("stream reset"));
  assertEquals(await code(boundedClientBody(broke, 1_000)), "client_closed");
});

Deno.test("resetAwareBody: a body that ends short of its length, or after its signal, is 499", async () => {
  assertEquals(await text(resetAwareBody(source(["ab", "cd"]), 4, undefined)), "abcd");
  assertEquals(await code(resetAwareBody(source(["ab"]), 4, undefined)), "client_closed");
  const aborted = new AbortController();
  aborted.abort();
  assertEquals(await code(resetAwareBody(source(["ab"]), null, aborted.signal)), "client_closed");
  assertEquals(
    await text(resetAwareBody(source(["ab"]), null, new AbortController().signal)),
    "ab",
  );
});

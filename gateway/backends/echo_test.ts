/**
 * The echo backend: an HTTP request's answer is its echo in bytes; a DIMSE operation's answer is
 * built only when read (a C-STORE's answer is dropped unread by dicom_scp), with the same content.
 */
import { assertEquals } from "../../tests/assert.ts";
import type { BackendConfig } from "../../shared/gateway_config/mod.ts";
import { Body, type Protocol, RequestEnvelope } from "../envelope.ts";
import { EchoBackend } from "./echo.ts";

/** A body that counts how often its data is asked for. */
class CountingBody extends Body {
  reads = 0;
  override async data(): Promise<unknown> {
    this.reads++;
    return await super.data();
  }
}

function request(protocol: Protocol): { req: RequestEnvelope; body: CountingBody } {
  const body = new CountingBody(new TextEncoder().encode('{"a":1}'), "application/json");
  const req = new RequestEnvelope({
    id: "r1",
    protocol,
    method: protocol === "dimse" ? "C-STORE" : "POST",
    path: "/x",
    metadata: { k: "v" },
    body,
    endpoint: "in",
  });
  return { req, body };
}

const echo = new EchoBackend({ name: "echo", service: "echo" } as unknown as BackendConfig);

Deno.test("echo: an HTTP answer is the echo, in bytes", async () => {
  const { req, body } = request("http");
  const res = await echo.invoke(req);
  assertEquals(body.reads, 1);
  assertEquals(res.headers.get("content-type"), "application/json");
  assertEquals(res.body.knownLength !== null, true);
  const answer = await res.body.data() as Record<string, unknown>;
  assertEquals([answer.method, answer.data, answer.metadata], ["POST", { a: 1 }, { k: "v" }]);
});

Deno.test("echo: a DIMSE answer is built when read, and never when dropped unread", async () => {
  const { req, body } = request("dimse");
  const dropped = await echo.invoke(req);
  const stream = dropped.body.forwardable() as ReadableStream<Uint8Array>;
  await stream.cancel();
  await new Promise((r) => setTimeout(r, 0));
  assertEquals(body.reads, 0);

  const res = await echo.invoke(req);
  assertEquals(body.reads, 0);
  assertEquals(res.headers.get("content-type"), "application/json");
  const answer = await res.body.data() as Record<string, unknown>;
  assertEquals(body.reads, 1);
  assertEquals([answer.protocol, answer.method, answer.data], ["dimse", "C-STORE", { a: 1 }]);
  assertEquals((answer.content as { sha256?: string }).sha256?.length, 64);
});

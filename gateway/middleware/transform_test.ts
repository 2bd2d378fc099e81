/** The transform middleware's choice of path: JSON bytes for a lone shift, parsed data otherwise. */
import { assertEquals } from "../../tests/assert.ts";
import type { GatewayConfig, MiddlewareConfig } from "../../shared/gateway_config/types.ts";
import { silentLogger } from "../../shared/log.ts";
import { Body, RequestEnvelope } from "../envelope.ts";
import type { GatewayError } from "../errors.ts";
import { createTransformMiddleware } from "./transform.ts";

/** A transform middleware over one in-memory spec. */
function middleware(spec: unknown[], options: Record<string, unknown> = {}) {
  const config = {
    name: "t",
    type: "transform",
    options: { spec_path: "spec.json", ...options },
  } as unknown as MiddlewareConfig;
  return createTransformMiddleware(config, {
    config: { transforms_path: "/nowhere" } as unknown as GatewayConfig,
    logger: silentLogger,
    baseDir: "/",
    validateOnly: true,
    transformSource: {
      resolve: (path) => `/nowhere/${path}`,
      read: () => Promise.resolve(JSON.stringify(spec)),
    },
  });
}

function request(body: string, contentType = "application/json"): RequestEnvelope {
  return new RequestEnvelope({
    id: "r1",
    protocol: "http",
    method: "POST",
    path: "/",
    endpoint: "test",
    body: new Body(new TextEncoder().encode(body), contentType),
  });
}

const SHIFT = [{ operation: "shift", spec: { a: "b.c" } }];

Deno.test("transform: a lone shift replaces the JSON bytes without parsing them", async () => {
  const mw = await middleware(SHIFT);
  const req = request('{ "a" : [1, 2.50] }', "application/fhir+json");
  await mw.onRequest!(req);
  // Nothing was parsed or left to serialize: the body holds the output bytes already.
  assertEquals(req.body.dataChanged, false);
  assertEquals(new TextDecoder().decode(await req.body.bytes()), '{"b":{"c":[1,2.5]}}');
  assertEquals(req.body.contentType, "application/fhir+json");
  // A later reader still gets the data.
  assertEquals(await req.body.data(), { b: { c: [1, 2.5] } });
});

Deno.test("transform: other chains, debug, envelopes and non-UTF-8 bodies take the parsed path", async () => {
  const cases: [unknown[], Record<string, unknown>, string][] = [
    [[...SHIFT, { operation: "default", spec: { d: 1 } }], {}, "application/json"],
    [SHIFT, { debug: true }, "application/json"],
    [
      [{ operation: "shift", spec: { data: { a: "data.b" } } }],
      { input: "envelope" },
      "application/json",
    ],
    [SHIFT, {}, "application/json; charset=utf-16le"],
  ];
  for (const [spec, options, type] of cases) {
    const mw = await middleware(spec, options);
    const body = type.includes("utf-16")
      ? new Body(Uint8Array.of(0x7b, 0, 0x7d, 0), type) // "{}" in UTF-16LE
      : request('{"a":1}', type).body;
    const req = request("{}");
    req.body = body;
    await mw.onRequest!(req);
    assertEquals(req.body.dataChanged, true, JSON.stringify({ spec, options, type }));
  }
});

Deno.test("transform: a body the scan declines (a repeated key) goes to the parser, which refuses it", async () => {
  const mw = await middleware(SHIFT);
  const req = request('{"a":1,"a":2}');
  let err: GatewayError | undefined;
  try {
    await mw.onRequest!(req);
  } catch (e) {
    err = e as GatewayError;
  }
  // JSON.parse would keep the last value where another reader keeps the first: a 400, not a guess.
  assertEquals([err?.status, err?.code], [400, "duplicate_json_key"]);
});

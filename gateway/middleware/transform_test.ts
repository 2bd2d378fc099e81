/** The transform middleware's choice of path: JSON bytes for a lone shift, parsed data otherwise. */
import { assertEquals } from "../../tests/assert.ts";
import type { GatewayConfig, MiddlewareConfig } from "../../shared/gateway_config/types.ts";
import { silentLogger } from "../../shared/log.ts";
import { Body, RequestEnvelope, ResponseEnvelope } from "../envelope.ts";
import type { GatewayError } from "../errors.ts";
import { createTransformMiddleware } from "./transform.ts";
import { keyProductAttack, manyStarAttack } from "../../tests/support/jolt.ts";
import { stepsSpent } from "../../shared/jolt/engine/mod.ts";

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

/** The error `fn` throws or rejects with (undefined when it does not). */
async function failure(fn: () => unknown): Promise<GatewayError | undefined> {
  try {
    await fn();
  } catch (e) {
    return e as GatewayError;
  }
  return undefined;
}

/** A body of `text` handed over as a stream (not in memory: the transform's awaited path). */
function streamed(text: string): Body {
  const bytes = new TextEncoder().encode(text);
  return new Body(
    new ReadableStream({
      start(c) {
        c.enqueue(bytes);
        c.close();
      },
    }),
    "application/json",
    undefined,
    bytes.byteLength,
  );
}

Deno.test("transform: a run past the JOLT work budget is 422 transform_budget_exceeded on requests, 500 on responses", async () => {
  const { spec, input } = keyProductAttack(); // 12,000,000 tries: over the 10,000,000 steps
  const text = JSON.stringify(input);
  const mw = await middleware(spec);
  const shapes: [string, () => RequestEnvelope][] = [
    ["in memory", () => request(text)],
    ["streamed", () => Object.assign(request("{}"), { body: streamed(text) })],
  ];
  for (const [what, make] of shapes) {
    const req = make();
    const err = await failure(() => mw.onRequest!(req));
    assertEquals([err?.status, err?.code], [422, "transform_budget_exceeded"], what);
    assertEquals(
      /transform t \(spec\.json\).*operation 0 \(shift\).*work steps/.test(err!.message),
      true,
    );
  }
  // The parsed path (a chain) and the response direction.
  const chain = await middleware([...spec, { operation: "sort" }], { apply: "right" });
  const res = new ResponseEnvelope(
    200,
    undefined,
    new Body(new TextEncoder().encode(text), "application/json"),
  );
  const err = await failure(() => chain.onResponse!(res, request("{}")));
  assertEquals([err?.status, err?.code], [500, "transform_budget_exceeded"]);
});

Deno.test("transform: max_steps sets the budget both ways, on the fast path and the parsed one", async () => {
  // 10 one-star keys by 2,000 keys: 20,000 tries, within the default budget.
  const { spec, input } = keyProductAttack(10, 2_000);
  const text = JSON.stringify(input);
  for (const chain of [spec, [...spec, { operation: "sort" }]]) {
    const tight = await middleware(chain, { max_steps: 10_000 });
    const err = await failure(() => tight.onRequest!(request(text)));
    assertEquals([err?.status, err?.code], [422, "transform_budget_exceeded"]);
    assertEquals(/more than 10000 work steps/.test(err!.message), true, err!.message);
    const roomy = await middleware(chain);
    const req = request(text);
    await roomy.onRequest!(req);
    assertEquals(await req.body.data(), null); // no key matches a pattern
  }
  // The budget the default leaves too small, raised: issue-33-sized work passes.
  const attack = keyProductAttack();
  const raised = await middleware(attack.spec, { max_steps: 20_000_000 });
  const req = request(JSON.stringify(attack.input));
  await raised.onRequest!(req);
  assertEquals(await req.body.data(), null);
});

Deno.test("transform: an output past its budget (a value copied into every item) is 422 on a request", async () => {
  // 1,000 characters into each of 200 items: 200,000 characters against 80,000 (8 per step).
  const spec = [{
    operation: "shift",
    spec: { items: { "*": { "@(2,patient)": "out[&1].patient" } } },
  }];
  const body = JSON.stringify({
    patient: "p".repeat(1_000),
    items: Array.from({ length: 200 }, () => ({})),
  });
  for (const chain of [spec, [...spec, { operation: "sort" }]]) {
    const mw = await middleware(chain, { max_steps: 10_000 });
    const err = await failure(() => mw.onRequest!(request(body)));
    assertEquals([err?.status, err?.code], [422, "transform_budget_exceeded"]);
    assertEquals(
      /output would be more than 80000 characters/.test(err!.message),
      true,
      err!.message,
    );
  }
});

Deno.test("transform: with fail_on_error = false a run past the budget passes the body unchanged", async () => {
  const { spec, input } = keyProductAttack();
  const text = JSON.stringify(input);
  const mw = await middleware(spec, { fail_on_error: false });
  const req = request(text);
  await mw.onRequest!(req);
  assertEquals(new TextDecoder().decode(await req.body.bytes()), text);
});

Deno.test("transform: issue 33's many-star spec over 20,000-character keys is done at once", async () => {
  const { spec, input } = manyStarAttack();
  const mw = await middleware(spec);
  const req = Object.assign(request("{}"), { body: streamed(JSON.stringify(input)) });
  await mw.onRequest!(req);
  assertEquals(await req.body.data(), null); // no key matches
  // Counted, not timed: the run's work steps (35 s of matching before, each key read once per
  // try now) are far below the 10,000,000 of its budget.
  const steps = stepsSpent();
  assertEquals(steps > 0 && steps < 1_000_000, true, `${steps} steps`);
});

/** Transforms through the gateway: request, response, both, failures, metadata routing, live edits. */
import { waitFor, withManagementToken } from "./support/mod.ts";
import { threadClock } from "./support/cpu_scaling.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, startUpstream } from "./harness.ts";
import { keyProductAttack, manyStarAttack } from "./support/jolt.ts";

const RENAME = JSON.stringify([
  { operation: "shift", spec: { name: "patient.name", id: "patient.id" } },
  { operation: "default", spec: { patient: { source: "gateway" } } },
]);

function proxy(upstream: string, middleware: string, extra = ""): string {
  return `
transforms_path = "{DIR}/transforms"
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"
[backends.up]
service = "http"
[backends.up.options]
base_url = "${upstream}"
${middleware}
[pipelines.api]
endpoints = ["api"]
middleware = ["t"]
backends = ["up"]
${extra}`;
}

const mw = (opts: string) => `
[middleware.t]
type = "transform"
[middleware.t.options]
${opts}
`;

/** Rejects after 60 s: ends a hang of `work`, and only that (no verdict rests on it). */
async function hangGuard<T>(work: Promise<T>): Promise<T> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error("hang guard (60 s): a request never ended")),
          60_000,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

Deno.test("a JSON request body is transformed on the way in", async () => {
  const up = startUpstream();
  const gw = await startTestGateway(proxy(up.url, mw(`spec_path = "rename.json"`)), {
    files: { "transforms/rename.json": RENAME },
  });
  try {
    const res = await fetch(`${gw.url}/api/p`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "Doe", id: "7" }),
    });
    assertEquals(res.status, 200);
    await res.body?.cancel();
    assertEquals(JSON.parse(new TextDecoder().decode(up.received[0].body)), {
      patient: { name: "Doe", id: "7", source: "gateway" },
    });
    assertEquals(up.received[0].headers.get("content-type"), "application/json");
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("XML and CSV request bodies are transformed as JSON data", async () => {
  const up = startUpstream();
  const spec = JSON.stringify([{
    operation: "shift",
    // XML attributes arrive as "@name" keys; JOLT reads a leading @ as a reference, so escape it.
    spec: { order: { "\\@id": "orderId", item: "items" }, "*": { code: "codes[]" } },
  }]);
  const gw = await startTestGateway(proxy(up.url, mw(`spec_path = "x.json"`)), {
    files: { "transforms/x.json": spec },
  });
  try {
    await (await fetch(`${gw.url}/api/x`, {
      method: "POST",
      headers: { "content-type": "application/xml" },
      body: '<order id="A1"><item>one</item><item>two</item></order>',
    })).body?.cancel();
    assertEquals(JSON.parse(new TextDecoder().decode(up.received[0].body)), {
      orderId: "A1",
      items: ["one", "two"],
    });
    await (await fetch(`${gw.url}/api/x`, {
      method: "POST",
      headers: { "content-type": "text/csv" },
      body: "code,label\nA,x\nB,y\n",
    })).body?.cancel();
    // A transformed CSV body is no longer rows of the header: it is sent as JSON.
    assertEquals(JSON.parse(new TextDecoder().decode(up.received[1].body)), { codes: ["A", "B"] });
    assertEquals(up.received[1].headers.get("content-type"), "application/json");
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("apply = right transforms the response; both transforms each way", async () => {
  const up = startUpstream((_req, body) =>
    Response.json({
      echoed: body.length ? JSON.parse(new TextDecoder().decode(body)) : null,
      name: "Doe",
      id: "9",
    })
  );
  const gw = await startTestGateway(
    proxy(up.url, mw(`spec_path = "rename.json"\napply = "right"`)),
    { files: { "transforms/rename.json": RENAME } },
  );
  try {
    const res = await fetch(`${gw.url}/api/p`);
    assertEquals(await res.json(), { patient: { name: "Doe", id: "9", source: "gateway" } });

    const both = JSON.stringify([{ operation: "default", spec: { touched: "yes" } }]);
    await Deno.writeTextFile(`${gw.dir}/transforms/both.json`, both);
    await gw.writeConfig(proxy(up.url, mw(`spec_path = "both.json"\napply = "both"`)));
    assertEquals(
      (await (await fetch(`${gw.mgmt}/api/reload`, withManagementToken({ method: "POST" }))).json())
        .ok,
      true,
    );
    const res2 = await fetch(`${gw.url}/api/p`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"a":1}',
    });
    const body = await res2.json();
    assertEquals(body.touched, "yes", "response transformed");
    assertEquals(body.echoed, { a: 1, touched: "yes" }, "request transformed");
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("fail_on_error: true fails the request naming the transform; false passes data unchanged", async () => {
  const up = startUpstream();
  // With input = "envelope" the output must keep a "data" key: this spec drops it.
  const broken = JSON.stringify([{ operation: "shift", spec: { data: { name: "n" } } }]);
  const gw = await startTestGateway(
    proxy(up.url, mw(`spec_path = "broken.json"\ninput = "envelope"`)),
    { files: { "transforms/broken.json": broken } },
  );
  try {
    const res = await fetch(`${gw.url}/api/p`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"name":"Doe"}',
    });
    assertEquals(res.status, 500);
    const err = (await res.json()).error;
    assertEquals(err.code, "transform_failed");
    assertMatch(err.message, /transform t \(broken\.json\)/);
    assertEquals(up.received.length, 0);

    await gw.writeConfig(
      proxy(up.url, mw(`spec_path = "broken.json"\ninput = "envelope"\nfail_on_error = false`)),
    );
    assertEquals(
      (await (await fetch(`${gw.mgmt}/api/reload`, withManagementToken({ method: "POST" }))).json())
        .ok,
      true,
    );
    const ok = await fetch(`${gw.url}/api/p`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: '{"name":"Doe"}',
    });
    assertEquals(ok.status, 200);
    await ok.body?.cancel();
    assertEquals(new TextDecoder().decode(up.received[0].body), '{"name":"Doe"}');
    assert(gw.logs.some((l) => l.includes("transform failed; data passes unchanged")));
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("input = envelope sees the request context and can set metadata", async () => {
  const up = startUpstream();
  const spec = JSON.stringify([{
    operation: "shift",
    spec: {
      data: { "*": "data.body.&" },
      context: {
        request: { method: "data.method", query: { tenant: ["data.tenant", "metadata.tenant"] } },
      },
    },
  }]);
  const gw = await startTestGateway(
    proxy(up.url, mw(`spec_path = "env.json"\ninput = "envelope"`)),
    { files: { "transforms/env.json": spec } },
  );
  try {
    await (await fetch(`${gw.url}/api/p?tenant=north`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: '{"x":1}',
    })).body?.cancel();
    assertEquals(JSON.parse(new TextDecoder().decode(up.received[0].body)), {
      body: { x: 1 },
      method: "PUT",
      tenant: "north",
    });
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("metadata_transform changes routing between backends", async () => {
  const reads = startUpstream(() => new Response("reads"));
  const writes = startUpstream(() => new Response("writes"));
  const spec = JSON.stringify([{
    operation: "shift",
    spec: { "*": "&", method: { GET: { "#read": "route" }, "*": { "#write": "route" } } },
  }]);
  const gw = await startTestGateway(
    `
transforms_path = "{DIR}/transforms"
[endpoints.api]
service = "http"
[endpoints.api.options]
path_prefix = "/api"
[middleware.route]
type = "metadata_transform"
[middleware.route.options]
spec_path = "route.json"
[backends.reads]
service = "http"
[backends.reads.options]
base_url = "${reads.url}"
[backends.reads.match]
route = "read"
[backends.writes]
service = "http"
[backends.writes.options]
base_url = "${writes.url}"
[backends.writes.match]
route = "write"
[pipelines.api]
endpoints = ["api"]
middleware = ["route"]
backends = ["reads", "writes"]
`,
    { files: { "transforms/route.json": spec } },
  );
  try {
    assertEquals(await (await fetch(`${gw.url}/api/x`)).text(), "reads");
    assertEquals(
      await (await fetch(`${gw.url}/api/x`, { method: "POST", body: "{}" })).text(),
      "writes",
    );
  } finally {
    await gw.stop();
    await reads.stop();
    await writes.stop();
  }
});

Deno.test("a transform file edited while the gateway runs: valid edits apply, invalid ones are rejected", async () => {
  const gw = await startTestGateway(
    `
transforms_path = "{DIR}/transforms"
[endpoints.echo]
service = "http"
[endpoints.echo.options]
path_prefix = "/echo"
[middleware.t]
type = "transform"
[middleware.t.options]
spec_path = "live.json"
[backends.echo]
service = "echo"
[pipelines.echo]
endpoints = ["echo"]
middleware = ["t"]
backends = ["echo"]
`,
    {
      files: { "transforms/live.json": JSON.stringify([{ operation: "default", spec: { v: 1 } }]) },
    },
  );
  const send = async () =>
    (await (await fetch(`${gw.url}/echo`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: "{}",
    })).json()).data;
  try {
    assertEquals(await send(), { v: 1 });
    const file = `${gw.dir}/transforms/live.json`;
    await Deno.writeTextFile(file, JSON.stringify([{ operation: "default", spec: { v: 2 } }]));
    // The watcher's reload lands: a request sees the edited spec (no restart).
    await waitFor(async () => JSON.stringify(await send()) === JSON.stringify({ v: 2 }), {
      timeoutMs: 30_000,
      description: "the edited spec applied without restart",
    });
    await Deno.writeTextFile(file, '[{"operation":"shiftt","spec":{}}]');
    await waitFor(
      () => Promise.resolve(gw.logs.some((l) => l.includes("transform change rejected"))),
      {
        timeoutMs: 30_000,
        description: "the invalid edit rejected (logged)",
      },
    );
    assert(gw.logs.some((l) => l.includes("transform change rejected") && l.includes("shiftt")));
    assertEquals(await send(), { v: 2 }, "the previous version stays");
  } finally {
    await gw.stop();
  }
});

Deno.test("an invalid transform file makes the configuration invalid", async () => {
  const dir = await Deno.makeTempDir();
  await Deno.mkdir(`${dir}/transforms`);
  await Deno.writeTextFile(
    `${dir}/transforms/bad.json`,
    '[{"operation":"shift","spec":{"a":{"@(x":"b"}}}]',
  );
  await Deno.writeTextFile(
    `${dir}/gw.toml`,
    `transforms_path = "transforms"
[network.main]
bind = "127.0.0.1"
port = 18080
[endpoints.e]
service = "http"
[endpoints.e.options]
path_prefix = "/e"
[middleware.t]
type = "transform"
[middleware.t.options]
spec_path = "bad.json"
[backends.echo]
service = "echo"
[pipelines.p]
endpoints = ["e"]
middleware = ["t"]
backends = ["echo"]
`,
  );
  const out = await new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--node-modules-dir=manual",
      "-A",
      "gateway/main.ts",
      "--validate-config",
      `${dir}/gw.toml`,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  const stderr = new TextDecoder().decode(out.stderr);
  assertEquals(out.code, 1, stderr);
  assertMatch(stderr, /middleware\.t/);
  assertMatch(stderr, /bad\.json/);
  assertMatch(stderr, /JOLT spec operation 0 \(shift\)/);
  await Deno.remove(dir, { recursive: true });
});

Deno.test("a lone shift works on the JSON bytes both ways; odd bodies take the parsed path", async () => {
  const up = startUpstream((_req, body) =>
    new Response(body.length ? body as BodyInit : '{ "id" : 9 , "name" : "Doe" }', {
      headers: { "content-type": "application/fhir+json; charset=UTF-8" },
    })
  );
  const spec = JSON.stringify([
    { operation: "shift", spec: { id: "patient.id", name: "patient.name", "*": "extra.&" } },
  ]);
  const defaults = JSON.stringify([{ operation: "default", spec: { patient: { seen: true } } }]);
  const config = proxy(
    up.url,
    `${mw(`spec_path = "shift.json"\napply = "both"`)}
[middleware.d]
type = "transform"
[middleware.d.options]
spec_path = "defaults.json"
`,
  ).replace('middleware = ["t"]', 'middleware = ["t", "d"]');
  const gw = await startTestGateway(config, {
    files: { "transforms/shift.json": spec, "transforms/defaults.json": defaults },
  });
  const post = (body: string | Uint8Array, type = "application/json") =>
    fetch(`${gw.url}/api/p`, {
      method: "POST",
      headers: { "content-type": type },
      body: body as BodyInit,
    });
  try {
    // Whitespace, escapes and number spellings come out as JSON.stringify writes them; the
    // second middleware parses what the shift wrote.
    const res = await post('{ "id" : 1.0 , "name" : "Jos\\u00e9" , "n" : 1e2 }');
    assertEquals(res.status, 200);
    await res.body?.cancel();
    assertEquals(
      new TextDecoder().decode(up.received[0].body),
      '{"patient":{"id":1,"name":"José","seen":true},"extra":{"n":100}}',
    );
    assertEquals(up.received[0].headers.get("content-type"), "application/json");

    // A repeated key: readers disagree on which value counts, so it is a 400, never forwarded.
    const dup = await post('{"id":1,"id":2}');
    assertEquals(dup.status, 400);
    assertEquals((await dup.json()).error.code, "duplicate_json_key");
    assertEquals(up.received.length, 1);

    // Another charset is decoded first (Latin-1 "é" is one byte), then sent as UTF-8.
    const latin1 = await post(
      Uint8Array.of(...new TextEncoder().encode('{"name":"Jos'), 0xe9, 0x22, 0x7d),
      "application/json; charset=ISO-8859-1",
    );
    await latin1.body?.cancel();
    assertEquals(JSON.parse(new TextDecoder().decode(up.received[1].body)).patient.name, "José");
    assertEquals(up.received[1].headers.get("content-type"), "application/json; charset=utf-8");

    // Malformed JSON is still a 400 naming the problem.
    const bad = await post('{"id":1,}');
    assertEquals(bad.status, 400);
    assertEquals((await bad.json()).error.code, "invalid_json");

    // The response (no request body: the upstream's own JSON) is shifted on the way out.
    const get = await fetch(`${gw.url}/api/p`);
    assertEquals(get.headers.get("content-type"), "application/fhir+json; charset=UTF-8");
    assertEquals(await get.json(), { patient: { id: 9, name: "Doe" } });
  } finally {
    await gw.stop();
    await up.stop();
  }
});

Deno.test("JOLT work is bounded: issue 33's many-star body is done at once, one past the budget answers 422 at once, and another pipeline keeps answering", async () => {
  const up = startUpstream();
  // 2,500 one-star keys against 5,000 keys: 12,500,000 tries, in a body under 64 KiB (the
  // transform runs on it in memory, at once).
  const product = keyProductAttack(2_500, 5_000);
  const stars = manyStarAttack();
  const endpoint = (name: string) => `
[endpoints.${name}]
service = "http"
[endpoints.${name}.options]
path_prefix = "/${name}"
[pipelines.${name}]
endpoints = ["${name}"]
backends = ["up"]`;
  const transform = (name: string, file: string, extra = "") => `
[middleware.${name}]
type = "transform"
[middleware.${name}.options]
spec_path = "${file}"
${extra}`;
  const config = `
transforms_path = "{DIR}/transforms"
[backends.up]
service = "http"
[backends.up.options]
base_url = "${up.url}"
${transform("stars", "stars.json")}
${transform("product", "product.json")}
${transform("lenient", "product.json", "fail_on_error = false")}
${endpoint("stars")}
middleware = ["stars"]
${endpoint("product")}
middleware = ["product"]
${endpoint("lenient")}
middleware = ["lenient"]
${endpoint("other")}
`;
  const gw = await startTestGateway(config, {
    workers: 1, // one isolate: a run holds the loop every pipeline is served from
    files: {
      "transforms/stars.json": JSON.stringify(stars.spec),
      "transforms/product.json": JSON.stringify(product.spec),
    },
  });
  const post = (path: string, body: unknown) =>
    fetch(`${gw.url}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(body),
    });
  try {
    const productBody = JSON.stringify(product.input);
    assert(productBody.length < 64 * 1024, "the body is read at once");
    // Durations here are the CPU time of this test's thread, which the gateway runs on (one
    // isolate, in this process): a held loop spends it; waiting for a core on a busy machine, and
    // the test files running beside this one, do not.
    const clock = threadClock();
    // Each big request goes with a request to the other pipeline, sent while the big one is in
    // the gateway: that one is answered (200) before the next big request is sent, so it waited
    // at most for the one run in progress, whatever the machine's load. An unbounded run would
    // hold it for good (the hang guard, 60 s, ends only that).
    const others: number[] = [];
    /** The last body the upstream got from a big request (not from the other pipeline). */
    const lastBig = () => up.received.filter((r) => !r.url.endsWith("/ping")).at(-1)!.body;
    const beside = async (big: Promise<Response>): Promise<Response> => {
      const other = fetch(`${gw.url}/other/ping`);
      const [res, o] = await hangGuard(Promise.all([big, other]));
      await o.body?.cancel();
      others.push(o.status);
      return res;
    };
    try {
      // 35 s of matching before; now each of the 1,000 tries reads its 20,000-character key once.
      let started = clock.ms();
      const res = await beside(post("/stars/p", stars.input));
      let ms = clock.ms() - started;
      assertEquals(res.status, 200);
      await res.body?.cancel();
      assertEquals(new TextDecoder().decode(lastBig()), "null");
      assert(ms < 1_000, `the many-star body took ${ms.toFixed(0)} ms of CPU`);

      started = clock.ms();
      const over = await beside(post("/product/p", product.input));
      ms = clock.ms() - started;
      assertEquals(over.status, 422);
      const err = (await over.json()).error;
      assertEquals(err.code, "transform_budget_exceeded");
      assertMatch(
        err.message,
        /transform product \(product\.json\).*more than 10000000 work steps/,
      );
      // About a tenth of a second of work here: stopped by the budget (the 422 says so), never
      // minutes.
      assert(ms < 5_000, `the body over the budget took ${ms.toFixed(0)} ms of CPU`);

      // fail_on_error = false: the body goes on unchanged.
      const lenient = await beside(post("/lenient/p", product.input));
      assertEquals(lenient.status, 200);
      await lenient.body?.cancel();
      assertEquals(new TextDecoder().decode(lastBig()), productBody);
    } finally {
      clock.close();
    }

    // The other pipeline answered beside every run.
    assertEquals(others, [200, 200, 200]);
    assert(gw.logs.some((l) => l.includes("transform failed; data passes unchanged")));
  } finally {
    await gw.stop();
    await up.stop();
  }
});

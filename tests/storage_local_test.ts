/**
 * The `storage` backend on a local root, end to end through a gateway: templates, the read /
 * write / Location rules, POST 409 and PUT replace, content types, traversal attempts refused
 * with nothing written, and a client that disconnects mid-upload leaving nothing behind.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import {
  listFiles,
  partialUpload,
  rawRequest,
  sha256Hex,
  storageConfig,
  until,
} from "./storage_support.ts";

const KV = `root = "{DIR}/store"\nread_pattern = "{path}"\nwrite_pattern = "{path}"`;

async function withGateway(options: string, fn: (gw: TestGateway) => Promise<void>, extra = "") {
  const gw = await startTestGateway(storageConfig(options, extra));
  try {
    await fn(gw);
  } finally {
    await gw.stop();
  }
}

Deno.test("storage: write_pattern with fields, uuid and timestamp; GET the Location back", async () => {
  await withGateway(
    `root = "{DIR}/store"\nread_pattern = "{path}"\n` +
      `write_pattern = "{patient.id}/{date}/{timestamp}-{uuid}.json"`,
    async (gw) => {
      const doc = JSON.stringify({ patient: { id: "p-42" }, resourceType: "Observation" });
      const res = await fetch(`${gw.url}/files`, {
        method: "POST",
        headers: { "content-type": "application/fhir+json" },
        body: doc,
      });
      const body = await res.json();
      assertEquals(res.status, 201, JSON.stringify(body));
      const location = res.headers.get("location")!;
      assertEquals(body.location, location);
      assertEquals(body.status, "stored");
      assertEquals(body.size, doc.length);
      assertEquals(body.sha256, await sha256Hex(new TextEncoder().encode(doc)));
      assertMatch(
        body.path,
        /^p-42\/\d{4}-\d{2}-\d{2}\/\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z-[0-9a-f-]{36}\.json$/,
      );
      assertEquals(location, `/files/${body.path}`);
      assertEquals(await Deno.readTextFile(`${gw.dir}/store/${body.path}`), doc);

      const got = await fetch(`${gw.url}${location}`);
      assertEquals(got.status, 200);
      assertEquals(got.headers.get("content-type"), "application/fhir+json");
      assertEquals(got.headers.get("etag"), `"${body.sha256}"`);
      assertMatch(got.headers.get("repr-digest")!, /^sha-256=:[A-Za-z0-9+/]+=*:$/);
      assertEquals(await got.text(), doc);

      const head = await fetch(`${gw.url}${location}`, { method: "HEAD" });
      assertEquals(head.status, 200);
      assertEquals(head.headers.get("content-type"), "application/fhir+json");
      assertEquals(head.headers.get("etag"), `"${body.sha256}"`);

      const cached = await fetch(`${gw.url}${location}`, {
        headers: { "if-none-match": `"${body.sha256}"` },
      });
      assertEquals(cached.status, 304);
      await cached.body?.cancel();
    },
  );
});

Deno.test("storage: metadata placeholders and a read_pattern with text around {path}", async () => {
  await withGateway(
    `root = "{DIR}/store"\nread_pattern = "by-endpoint/{path}.bin"\n` +
      `write_pattern = "by-endpoint/{endpoint}/{uuid}.bin"`,
    async (gw) => {
      const res = await fetch(`${gw.url}/files/ignored`, {
        method: "POST",
        body: new TextEncoder().encode("abc"),
      });
      const body = await res.json();
      assertEquals(res.status, 201, JSON.stringify(body));
      assertMatch(body.path, /^by-endpoint\/files\/[0-9a-f-]{36}\.bin$/);
      // read_pattern maps /files/<x> to by-endpoint/<x>.bin: the Location inverts that.
      const id = body.path.slice("by-endpoint/".length, -".bin".length);
      assertEquals(body.location, `/files/${id}`);
      const got = await fetch(`${gw.url}${body.location}`);
      assertEquals(got.status, 200);
      assertEquals(got.headers.get("content-type"), "application/octet-stream");
      assertEquals(await got.text(), "abc");
    },
  );
});

Deno.test("storage: a missing template value is a 400 naming the placeholder, nothing written", async () => {
  await withGateway(
    `root = "{DIR}/store"\nwrite_pattern = "{patient_id}/{uuid}.json"`,
    async (gw) => {
      const res = await fetch(`${gw.url}/files`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ other: 1 }),
      });
      const body = await res.json();
      assertEquals(res.status, 400);
      assertEquals(body.error.code, "missing_path_value");
      assertMatch(body.error.message, /\{patient_id\}/);
      assertEquals(body.error.details, { placeholder: "patient_id" });
      assertEquals(await listFiles(`${gw.dir}/store`), []);
    },
  );
});

Deno.test("storage: every traversal attempt is refused with 400 and nothing is written", async () => {
  await withGateway(
    `root = "{DIR}/store"\nread_pattern = "{path}"\nwrite_pattern = "in/{name}.dat"`,
    async (gw) => {
      const hostile = [
        "..",
        "../x",
        "../../../../etc/passwd",
        "a/../../x",
        "/etc/passwd",
        "a\\..\\..\\x",
        "a\u0000b",
        "a//b",
        "a/",
        "",
        ".",
        "./x",
        "a\nb",
        "a\x7fb",
        "x".repeat(300),
      ];
      for (const name of hostile) {
        const res = await fetch(`${gw.url}/files`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ name }),
        });
        const body = await res.json();
        assertEquals(res.status, 400, `${JSON.stringify(name)}: ${JSON.stringify(body)}`);
        assertEquals(body.error.code, "invalid_storage_path", JSON.stringify(name));
      }
      // Hidden names are the backend's own (temporaries, sidecars): refused too.
      const hidden = await fetch(`${gw.url}/files`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: "x/.hidden" }),
      });
      assertEquals(hidden.status, 400);
      assertEquals((await hidden.json()).error.code, "invalid_storage_path");
      // Objects and arrays are not path values.
      const object = await fetch(`${gw.url}/files`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name: { a: 1 } }),
      });
      assertEquals(object.status, 400);
      await object.body?.cancel();
      // Reads through {path}: percent-encoded separators, dots, NUL, backslash, empty segments.
      for (
        const target of [
          "/files/..%2F..%2Fgateway.toml",
          "/files/%2e%2e%2fgateway.toml",
          "/files/a%00b",
          "/files/a%5C..%5Cb",
          "/files/in//x.dat",
          "/files/%2Fetc%2Fpasswd",
          "/files/in/.x.dat.meta.json",
          "/files/%ZZ",
        ]
      ) {
        const res = await rawRequest(gw.dataPort, "GET", target);
        assertEquals(res.status, 400, `${target}: ${res.text}`);
        assertEquals(JSON.parse(res.text).error.code, "invalid_storage_path", target);
      }
      assertEquals(await listFiles(`${gw.dir}/store`), []);
      assertEquals(await listFiles(gw.dir), ["gateway.toml"]);
    },
  );
});

Deno.test("storage: a symbolic link inside the root that leads outside is refused", async () => {
  await withGateway(KV, async (gw) => {
    await Deno.mkdir(`${gw.dir}/store`, { recursive: true });
    await Deno.mkdir(`${gw.dir}/outside`);
    await Deno.writeTextFile(`${gw.dir}/outside/secret.txt`, "secret");
    await Deno.symlink(`${gw.dir}/outside`, `${gw.dir}/store/link`);
    const read = await fetch(`${gw.url}/files/link/secret.txt`);
    assertEquals(read.status, 400);
    assertEquals((await read.json()).error.code, "invalid_storage_path");
    const write = await fetch(`${gw.url}/files/link/new.txt`, { method: "PUT", body: "x" });
    assertEquals(write.status, 400);
    await write.body?.cancel();
    assertEquals(await listFiles(`${gw.dir}/outside`), ["secret.txt"]);
  });
});

Deno.test("storage: POST never overwrites (409), PUT replaces (201 then 200)", async () => {
  await withGateway(KV, async (gw) => {
    const url = `${gw.url}/files/docs/a.txt`;
    const first = await fetch(url, {
      method: "POST",
      headers: { "content-type": "text/plain; charset=utf-8" },
      body: "first",
    });
    assertEquals(first.status, 201);
    assertEquals(first.headers.get("location"), "/files/docs/a.txt");
    await first.body?.cancel();

    const again = await fetch(url, { method: "POST", body: "second" });
    assertEquals(again.status, 409);
    assertEquals((await again.json()).error.code, "object_exists");
    assertEquals(await (await fetch(url)).text(), "first");

    const put = await fetch(url, {
      method: "PUT",
      headers: { "content-type": "text/markdown" },
      body: "# replaced",
    });
    assertEquals(put.status, 200);
    const putBody = await put.json();
    assertEquals(putBody.status, "stored");
    assertEquals(putBody.location, "/files/docs/a.txt");
    const got = await fetch(url);
    assertEquals(got.headers.get("content-type"), "text/markdown");
    assertEquals(await got.text(), "# replaced");

    const created = await fetch(`${gw.url}/files/docs/b.txt`, { method: "PUT", body: "b" });
    assertEquals(created.status, 201);
    await created.body?.cancel();
    // Only the objects and their hidden sidecars are on disk: no temporaries.
    assertEquals(await listFiles(`${gw.dir}/store`), [
      "docs/.a.txt.meta.json",
      "docs/.b.txt.meta.json",
      "docs/a.txt",
      "docs/b.txt",
    ]);
  });
});

Deno.test("storage: content types round trip, binary bytes intact", async () => {
  await withGateway(KV, async (gw) => {
    const png = crypto.getRandomValues(new Uint8Array(60_000));
    const cases: [string, string, BodyInit][] = [
      ["img/scan.png", "image/png", png],
      ["report.pdf", "application/pdf", png.slice(0, 1000)],
      ["rows.csv", "text/csv; charset=utf-8", "a,b\n1,2\n"],
      ["note.xml", "application/xml", "<a x='1'/>"],
    ];
    for (const [path, type, body] of cases) {
      const res = await fetch(`${gw.url}/files/${path}`, {
        method: "PUT",
        headers: { "content-type": type },
        body,
      });
      assertEquals(res.status, 201, path);
      await res.body?.cancel();
    }
    for (const [path, type, body] of cases) {
      const res = await fetch(`${gw.url}/files/${path}`);
      assertEquals(res.headers.get("content-type"), type, path);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const expected = typeof body === "string" ? new TextEncoder().encode(body) : body;
      assertEquals(bytes, expected as Uint8Array, path);
    }
    // A file put there by hand has no sidecar: served as application/octet-stream.
    await Deno.writeTextFile(`${gw.dir}/store/manual.txt`, "by hand");
    const manual = await fetch(`${gw.url}/files/manual.txt`);
    assertEquals(manual.headers.get("content-type"), "application/octet-stream");
    assertEquals(manual.headers.get("etag"), null);
    assertEquals(await manual.text(), "by hand");
  });
});

Deno.test("storage: 404 object_not_found, DELETE, and 405 for a method without a pattern", async () => {
  await withGateway(`root = "{DIR}/store"\nread_pattern = "{path}"`, async (gw) => {
    const missing = await fetch(`${gw.url}/files/nope.json`);
    assertEquals(missing.status, 404);
    assertEquals(missing.headers.get("content-type"), "application/json");
    const body = await missing.json();
    assertEquals(body.error.code, "object_not_found");
    assert(body.error.request_id, "request id in the error");

    const head = await fetch(`${gw.url}/files/nope.json`, { method: "HEAD" });
    assertEquals(head.status, 404);

    const dir = await fetch(`${gw.url}/files/`);
    assertEquals(dir.status, 400);
    await dir.body?.cancel();

    const post = await fetch(`${gw.url}/files/x`, { method: "POST", body: "x" });
    assertEquals(post.status, 405);
    assertEquals(post.headers.get("allow"), "GET, HEAD, DELETE");
    assertEquals((await post.json()).error.code, "method_not_allowed");

    await Deno.mkdir(`${gw.dir}/store/sub`, { recursive: true });
    await Deno.writeTextFile(`${gw.dir}/store/sub/x.txt`, "x");
    const subdir = await fetch(`${gw.url}/files/sub`);
    assertEquals(subdir.status, 404, "a directory is not an object");
    await subdir.body?.cancel();
    const del = await fetch(`${gw.url}/files/sub/x.txt`, { method: "DELETE" });
    assertEquals(del.status, 204);
    await del.body?.cancel();
    const gone = await fetch(`${gw.url}/files/sub/x.txt`, { method: "DELETE" });
    assertEquals(gone.status, 404);
    await gone.body?.cancel();
  });
});

Deno.test("storage: a relative root resolves against the config file's directory", async () => {
  await withGateway(
    `root = "data/objects"\nread_pattern = "{path}"\nwrite_pattern = "{path}"`,
    async (gw) => {
      const res = await fetch(`${gw.url}/files/a.txt`, { method: "PUT", body: "rel" });
      assertEquals(res.status, 201);
      await res.body?.cancel();
      assertEquals(await Deno.readTextFile(`${gw.dir}/data/objects/a.txt`), "rel");
    },
  );
});

Deno.test("storage: a body over max_body_size is refused with 413 and leaves nothing", async () => {
  const gw = await startTestGateway(
    `[proxy.content_limits]\nmax_body_size = 1000\n` +
      storageConfig(`root = "{DIR}/store"\nwrite_pattern = "{path}"`),
  );
  try {
    // Chunked (no Content-Length): the limit is found while streaming.
    const stream = ReadableStream.from([new Uint8Array(600), new Uint8Array(600)]);
    const res = await fetch(`${gw.url}/files/big.bin`, { method: "PUT", body: stream });
    assertEquals(res.status, 413);
    assertEquals((await res.json()).error.code, "payload_too_large");
    await until(async () => (await listFiles(`${gw.dir}/store`)).length === 0, "cleanup");
  } finally {
    await gw.stop();
  }
});

Deno.test("storage: a client that disconnects mid-upload leaves no object and no temporary file", async () => {
  await withGateway(KV, async (gw) => {
    const upload = await partialUpload(gw.dataPort, "/files/part/big.bin", 8 << 20, 1 << 20);
    // The temporary file exists while the body streams in...
    await until(
      async () => (await listFiles(`${gw.dir}/store`)).some((f) => f.endsWith(".tmp")),
      "the temporary file",
    );
    upload.close();
    // ...and is gone once the gateway noticed the disconnect.
    await until(
      async () => (await listFiles(`${gw.dir}/store`)).length === 0,
      "the temporary file to be removed",
    );
    const res = await fetch(`${gw.url}/files/part/big.bin`);
    assertEquals(res.status, 404);
    await res.body?.cancel();
  });
});

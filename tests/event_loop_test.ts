/**
 * No request may hold the event loop: a real gateway process (one data-plane isolate) gets each
 * pathological body (JSON nested 100,000 levels, an XML element with 200,000 attributes, a JSON
 * object of 100,000 keys through a shift, a CSV header of 1,000,000 columns, a CSV cell of 9 MB,
 * XML with 1,000,000 entity references, a form of 1,000,000 fields, a CSV of 200,000 rows) while
 * a small request is sent beside it; the small one must be answered quickly, and the large one
 * gets its 4xx with a stable code or completes. The codecs' own tests measure the stalls in
 * process, to 100 ms (gateway/codecs/*_test.ts).
 */
import { assert, assertEquals } from "./assert.ts";
import { cpuMsOf, freePort, removeDir, startGateway, tempDir } from "./support/mod.ts";

function config(dataPort: number, mgmtPort: number, transforms: string): string {
  return `transforms_path = "${transforms}"

[network.main]
bind = "127.0.0.1"
port = ${dataPort}

[management]
bind = "127.0.0.1"
port = ${mgmtPort}

[logging]
level = "warn"

# One data-plane isolate: the small request must wait behind the big one if it holds the loop.
[runtime]
workers = 1

[endpoints.echo_in]
service = "http"
[endpoints.echo_in.options]
path_prefix = "/echo"

[endpoints.shift_in]
service = "http"
[endpoints.shift_in.options]
path_prefix = "/shift"

[backends.echo]
service = "echo"

[middleware.rename]
type = "transform"
[middleware.rename.options]
spec_path = "rename.json"
fail_on_error = true

[pipelines.echo]
endpoints = ["echo_in"]
backends = ["echo"]

[pipelines.shift]
endpoints = ["shift_in"]
middleware = ["rename"]
backends = ["echo"]
`;
}

/**
 * Sends `body`, and 50 ms later a small GET; answers both statuses and how long the small one was
 * held: its wait, counting only the CPU time the gateway process (`pid`) had meanwhile. A gateway
 * busy with the big body holds the small one with CPU time; a gateway waiting for a core on a
 * loaded machine (other test files beside this one) holds it with none, and that is not the
 * gateway's doing.
 */
async function beside(
  base: string,
  pid: number,
  path: string,
  body: Uint8Array<ArrayBuffer>,
  contentType: string,
): Promise<{ big: number; bigText: string; smallMs: number }> {
  const big = fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": contentType },
    body,
  });
  await new Promise((r) => setTimeout(r, 50));
  const started = performance.now();
  const cpuBefore = cpuMsOf(pid);
  const small = await fetch(`${base}/echo/ping`);
  await small.body?.cancel();
  const smallMs = Math.min(performance.now() - started, cpuMsOf(pid) - cpuBefore);
  assertEquals(small.status, 200);
  const res = await big;
  const bigText = await res.text();
  return { big: res.status, bigText, smallMs };
}

Deno.test("event loop: pathological bodies never hold back a small request", async () => {
  const dir = await tempDir("gw-event-loop-");
  await Deno.writeTextFile(
    `${dir}/rename.json`,
    JSON.stringify([{ operation: "shift", spec: { "*": "out.&" } }]),
  );
  const port = freePort();
  const gw = await startGateway({ configText: config(port, freePort(), dir) });
  const base = `http://127.0.0.1:${port}`;
  const enc = new TextEncoder();
  try {
    // Warm up both pipelines.
    for (const p of ["/echo/x", "/shift/x"]) {
      const r = await fetch(`${base}${p}`, { method: "POST", body: '{"a":1}' });
      await r.body?.cancel();
    }
    const cases: [string, string, Uint8Array<ArrayBuffer>, string, number, string?][] = [
      [
        "JSON nested 100,000 levels",
        "/echo/deep",
        enc.encode("[".repeat(100_000) + "]".repeat(100_000)),
        "application/json",
        400,
        "nesting_too_deep",
      ],
      [
        "XML element with 200,000 attributes",
        "/echo/attrs",
        enc.encode(`<r ${Array.from({ length: 200_000 }, (_, i) => `a${i}="${i}"`).join(" ")}/>`),
        "application/xml",
        413,
        "too_many_xml_attributes",
      ],
      [
        "JSON object of 100,000 keys through a shift",
        "/shift/keys",
        enc.encode(
          JSON.stringify(
            Object.fromEntries(Array.from({ length: 100_000 }, (_, i) => [`k${i}`, i])),
          ),
        ),
        "application/json",
        200,
      ],
      [
        // It held the loop 4 to 12.5 s: csv-parse tried its three row delimiters, with three new
        // Buffers, at every byte of the first row.
        "CSV header of 1,000,000 columns (7.9 MB)",
        "/echo/columns",
        enc.encode(Array.from({ length: 1_000_000 }, (_, i) => `c${i}`).join(",") + "\n1\n"),
        "text/csv",
        413,
        "too_many_csv_columns",
      ],
      [
        "CSV with a 9 MB cell",
        "/echo/cell",
        enc.encode("a\n" + "x".repeat(9_000_000) + "\n"),
        "text/csv",
        413,
        "csv_cell_too_large",
      ],
      [
        "XML with 1,000,000 entity references (5 MB)",
        "/echo/references",
        enc.encode(`<r>${"&amp;".repeat(1_000_000)}</r>`),
        "application/xml",
        413,
        "too_many_xml_references",
      ],
      [
        "form of 1,000,000 fields with bracket keys",
        "/echo/form",
        enc.encode("a[b][]=1&".repeat(1_000_000)),
        "application/x-www-form-urlencoded",
        413,
        "too_many_form_fields",
      ],
      [
        "CSV of 200,000 rows",
        "/echo/rows",
        enc.encode(
          "id,name\n" + Array.from({ length: 200_000 }, (_, i) => `${i},n${i}`).join("\n"),
        ),
        "text/csv",
        413,
        "too_many_csv_rows",
      ],
    ];
    for (const [name, path, body, type, status, code] of cases) {
      const r = await beside(base, gw.process.pid, path, body, type);
      assertEquals(r.big, status, `${name}: ${r.bigText.slice(0, 300)}`);
      if (code) assertEquals(JSON.parse(r.bigText).error.code, code, name);
      assert(!r.bigText.includes("Maximum call stack"), `${name}: no internal message`);
      // The small request waits at most for one bounded slice of work, not for the big one. The
      // 100,000-key shift holds the loop about 0.5 s of CPU; the stalls this guards against took
      // 16 s and more (a quadratic scan), so 2.5 s of the gateway's CPU tells them apart.
      assert(r.smallMs < 2_500, `${name}: the small request was held ${r.smallMs.toFixed(0)} ms`);
    }
  } finally {
    await gw.stop();
    await removeDir(dir);
  }
});

import assert from "node:assert/strict";
import { extractTarEntry } from "./tar.ts";

const enc = new TextEncoder();

/** One ustar header block (checksum filled in). */
function header(name: string, size: number, type = "0", prefix = ""): Uint8Array {
  const h = new Uint8Array(512);
  const put = (offset: number, text: string) => h.set(enc.encode(text), offset);
  put(0, name);
  put(100, "0000755\0");
  put(108, "0000000\0");
  put(116, "0000000\0");
  put(124, size.toString(8).padStart(11, "0") + "\0");
  put(136, "00000000000\0");
  put(156, type);
  put(257, "ustar\0");
  put(263, "00");
  put(345, prefix);
  h.fill(0x20, 148, 156);
  const sum = h.reduce((a, b) => a + b, 0);
  put(148, sum.toString(8).padStart(6, "0") + "\0 ");
  return h;
}

function padded(data: Uint8Array): Uint8Array {
  const out = new Uint8Array(Math.ceil(data.byteLength / 512) * 512);
  out.set(data);
  return out;
}

function entry(name: string, content: string, type = "0", prefix = ""): Uint8Array[] {
  const data = enc.encode(content);
  return [header(name, data.byteLength, type, prefix), padded(data)];
}

function pax(records: Record<string, string>): Uint8Array[] {
  let body = "";
  for (const [k, v] of Object.entries(records)) {
    const rest = ` ${k}=${v}\n`;
    let len = rest.length + 1;
    while (String(len).length + rest.length !== len) len = String(len).length + rest.length;
    body += `${len}${rest}`;
  }
  return entry("PaxHeader", body, "x");
}

/** A stream of `parts` cut into odd-sized chunks (the reader must not depend on block alignment). */
function stream(parts: Uint8Array[]): ReadableStream<Uint8Array> {
  const all = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0) + 1024);
  let o = 0;
  for (const p of parts) {
    all.set(p, o);
    o += p.byteLength;
  }
  let offset = 0;
  return new ReadableStream({
    pull(c) {
      if (offset >= all.byteLength) return c.close();
      c.enqueue(all.slice(offset, offset + 333));
      offset += 333;
    },
  });
}

async function extract(parts: Uint8Array[], wanted = (n: string) => n.endsWith("/gateway")) {
  const chunks: Uint8Array[] = [];
  const found = await extractTarEntry(
    stream(parts),
    wanted,
    (c) => (chunks.push(c.slice()), Promise.resolve()),
  );
  return { found, text: new TextDecoder().decode(new Uint8Array(chunks.flatMap((c) => [...c]))) };
}

Deno.test("tar: finds the binary after directories and other files, across chunk boundaries", async () => {
  const big = "x".repeat(5000);
  const { found, text } = await extract([
    ...entry("rel/", "", "5"),
    ...entry("rel/README.md", big),
    ...entry("rel/gateway", "#!/bin/sh\necho hi\n"),
    ...entry("rel/gateway2/gateway", "second"),
  ]);
  assert.deepEqual(found, { name: "rel/gateway", size: 18, mode: 0o755 });
  assert.equal(text, "#!/bin/sh\necho hi\n");
});

Deno.test("tar: ustar prefixes, pax paths and GNU long names", async () => {
  const long = `${"d".repeat(120)}/gateway`;
  assert.equal(
    (await extract([...entry("gateway", "p", "0", "some/prefix")])).found?.name,
    "some/prefix/gateway",
  );
  assert.equal((await extract([...pax({ path: long }), ...entry("trunc", "pax")])).text, "pax");
  assert.equal(
    (await extract([...entry("././@LongLink", long, "L"), ...entry("trunc", "gnu")])).found?.name,
    long,
  );
});

Deno.test("tar: none found, a corrupt header, a truncated archive", async () => {
  assert.equal((await extract([...entry("rel/other", "x")])).found, null);
  const bad = header("rel/gateway", 3);
  bad[0] = "X".charCodeAt(0);
  await assert.rejects(() => extract([bad, padded(enc.encode("abc"))]), /header checksum/);
  const h = header("rel/gateway", 4096);
  await assert.rejects(
    () =>
      extractTarEntry(
        new ReadableStream({ start: (c) => (c.enqueue(h), c.close()) }),
        () => true,
        () => Promise.resolve(),
      ),
    /truncated tar archive/,
  );
});

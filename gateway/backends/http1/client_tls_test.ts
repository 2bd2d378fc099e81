/** The client against https upstreams (`Deno.serve` with a self-signed certificate). */

import { assert, assertEquals, assertRejects } from "../../../tests/assert.ts";
import { removeDir, runCommand, tempDir } from "../../../tests/support/mod.ts";
import type { Http1Error } from "./mod.ts";
import {
  drain,
  patternStream,
  rawServer,
  send,
  serveUpstream,
  testClient,
} from "../../../tests/support/http1_servers.ts";

/** A CA and a server certificate for 127.0.0.1 signed by it (rustls refuses a CA as the leaf). */
async function makeCaAndLeaf(dir: string): Promise<{ ca: string; cert: string; key: string }> {
  const openssl = async (...args: string[]) => {
    const result = await runCommand("openssl", args, { cwd: dir });
    if (result.code !== 0) throw new Error(`openssl ${args[0]} failed: ${result.stderr}`);
  };
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  await openssl(
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "1",
    "-subj",
    "/CN=test CA",
  );
  await openssl("req", ...ec, "-keyout", "leaf.key", "-out", "leaf.csr", "-subj", "/CN=127.0.0.1");
  await Deno.writeTextFile(
    `${dir}/leaf.ext`,
    "basicConstraints=CA:FALSE\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
  );
  await openssl(
    "x509",
    "-req",
    "-in",
    "leaf.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "leaf.crt",
    "-days",
    "1",
    "-extfile",
    "leaf.ext",
  );
  const read = (name: string) => Deno.readTextFile(`${dir}/${name}`);
  return { ca: await read("ca.crt"), cert: await read("leaf.crt"), key: await read("leaf.key") };
}

Deno.test("https: requests over TLS with our CA, ALPN http/1.1, socket reused", async () => {
  const dir = await tempDir("gw-http1-tls-");
  const pki = await makeCaAndLeaf(dir);
  const upstream = serveUpstream(
    async (req) => {
      const body = await req.text();
      return req.url.endsWith("/big")
        ? new Response(patternStream(3 * 1024 * 1024))
        : new Response(`${req.method} ${body}`);
    },
    { cert: pki.cert, key: pki.key },
  );
  const client = testClient({ caCerts: [pki.ca] });
  try {
    assert(upstream.url.startsWith("https://"));
    for (let i = 0; i < 5; i++) {
      const res = await send(client, `${upstream.url}/x`, {
        method: "POST",
        body: new TextEncoder().encode(`n${i}`),
      });
      assertEquals(await res.text(), `POST n${i}`);
    }
    const big = await drain((await send(client, `${upstream.url}/big`)).body);
    assertEquals([big.bytes, big.ok], [3 * 1024 * 1024, true]);
    assertEquals(upstream.connections.size, 1);

    // Without the CA the certificate is refused.
    const strict = testClient();
    try {
      const error = await assertRejects(() => send(strict, upstream.url), /TLS handshake/);
      assertEquals((error as Http1Error).code, "tls_failed");
    } finally {
      await strict.close();
    }
  } finally {
    await client.close();
    await upstream.stop();
    await removeDir(dir);
  }
});

Deno.test("https: a peer that never completes the handshake hits connectTimeoutMs", async () => {
  const server = rawServer(async (conn) => {
    await conn.readBytes(1 << 20);
  });
  const client = testClient({ connectTimeoutMs: 200 });
  try {
    const error = await assertRejects(
      () => send(client, `https://127.0.0.1:${server.port}/`),
      /timed out after 200 ms/,
    );
    assertEquals((error as Http1Error).code, "connect_timeout");
  } finally {
    await client.close();
    await server.stop();
  }
});

/**
 * Messages nobody here wrote, through the `hl7` endpoint: the sample messages shipped inside the
 * npm packages `hl7-standard` 1.0.4 and `hl7` 1.1.1 (v2.3 to 2.5.1; tests/support/hl7_samples.ts),
 * each sent over MLLP, forwarded byte for byte to an HTTP receiver and acknowledged `AA` with its
 * own control id; the invalid samples those packages ship are answered `AR` naming the problem.
 */
import { readFirstHl7Header } from "../gateway/codecs/mod.ts";
import { assert, assertEquals } from "./assert.ts";
import { HL7_REFUSED_SAMPLES, hl7Samples, sampleFile, withCr } from "./support/hl7_samples.ts";
import { ackOf, MllpTestClient } from "./support/mllp.ts";
import { startMllpGateway } from "./support/hl7_gateway.ts";
import { waitFor } from "./support/mod.ts";
import { ackCodes } from "../gateway/endpoints/hl7/mod.ts";

Deno.test({
  name: "hl7 endpoint: the npm packages' sample messages get AA, their invalid ones AR",
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const bodies: string[] = [];
    const receiver = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen() {} }, async (req) => {
      bodies.push(await req.text());
      return new Response("ok");
    });
    const { gw, port } = await startMllpGateway(`
[backends.rcv]
service = "http"
[backends.rcv.options]
base_url = "http://127.0.0.1:${receiver.addr.port}/in"

[pipelines.samples]
endpoints = ["mllp"]
backends = ["rcv"]
`);
    const client = await MllpTestClient.connect(port);
    try {
      const samples = (await hl7Samples()).filter((s) => !/^\s*(FHS|BHS)/.test(s.text));
      assert(samples.length >= 5, `samples found: ${samples.length}`);
      const versions = new Set<string>();
      let unasked = 0;
      for (const [i, sample] of samples.entries()) {
        const text = withCr(sample.text.trim()) + "\r";
        const header = readFirstHl7Header(text);
        versions.add(header.version);
        const expected = ackCodes(
          "message",
          header.acceptAckType,
          header.applicationAckType,
          "accept",
        );
        await client.send(text);
        // MSH-15 = MSH-16 = NE (enhanced mode, no acknowledgement asked for): none is sent.
        for (const code of expected) {
          const ack = ackOf(await client.next());
          assertEquals([ack.code, ack.controlId], [code, header.controlId], sample.name);
        }
        await waitFor(() => Promise.resolve(bodies.length === i + 1), {
          timeoutMs: 10_000,
          description: `${sample.name} delivered`,
        });
        if (expected.length === 0) unasked++;
        assertEquals(bodies[i], text, `${sample.name} reached the receiver byte for byte`);
      }
      assert(unasked < samples.length, "some samples ask for an ACK");
      assert(versions.size >= 2, `versions: ${[...versions].join(", ")}`);
      for (const bad of HL7_REFUSED_SAMPLES) {
        const text = withCr((await sampleFile(bad.pkg, bad.version, bad.file)).trim()) + "\r";
        const ack = ackOf(await client.request(text));
        assertEquals(ack.code, "AR", bad.file);
        assert(ack.err !== "", `${bad.file}: ERR names the problem`);
      }
    } finally {
      client.close();
      await gw.stop();
      await receiver.shutdown();
    }
  },
});

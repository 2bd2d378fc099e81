/**
 * Compressed C-STORE passes through as it is (SPEC: "the stored syntax passed through as-is for
 * C-STORE of compressed data"). Generated instances are compressed by DCMTK (`dcmcjpeg` JPEG
 * baseline, extended and lossless, `dcmcrle` RLE), sent by `storescu` proposing that syntax into
 * a dicom_scp endpoint with `storage_dir`, whose pipeline forwards them through a dicom_scu backend
 * to DCMTK `storescp` accepting every syntax. The stored and the forwarded files must keep the
 * transfer syntax and the dataset bytes (pixel data included) of the file that was sent; so must a
 * series of two sizes sent on one association (the listener reuses its memory between instances
 * when the pipeline lets go of them). A PACS that accepts only uncompressed data gets nothing (no
 * transcoding), and the sender its refusal.
 */
import { generateInstances } from "../fixtures/dicom/generate.ts";
import { type DicomPeer, startStorescp } from "../fixtures/dicom/peers.ts";
import { encodeMultipart, type P10File, parseP10, TS } from "../gateway/dicom/mod.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import {
  type CommandResult,
  freePort,
  removeDir,
  requirePeer,
  runCommand,
  tempDir,
} from "./support/mod.ts";

const HAS_DCMTK = requirePeer("DCMTK", "dcmcjpeg", "dcmtk");

/** One compressed form: how DCMTK makes it, what storescu proposes, the syntax it has. */
interface Codec {
  name: string;
  make: (src: string, out: string) => [string, string[]];
  propose: string;
  syntax: string;
}

const CODECS: Codec[] = [
  {
    name: "JPEG baseline",
    make: (src, out) => ["dcmcjpeg", ["+eb", "+un", src, out]],
    propose: "-xy",
    syntax: "1.2.840.10008.1.2.4.50",
  },
  {
    name: "JPEG extended",
    make: (src, out) => ["dcmcjpeg", ["+ee", "+un", src, out]],
    propose: "-xx",
    syntax: "1.2.840.10008.1.2.4.51",
  },
  {
    name: "JPEG lossless (SV1)",
    make: (src, out) => ["dcmcjpeg", ["+e1", src, out]],
    propose: "-xs",
    syntax: "1.2.840.10008.1.2.4.70",
  },
  {
    name: "RLE lossless",
    make: (src, out) => ["dcmcrle", [src, out]],
    propose: "-xr",
    syntax: "1.2.840.10008.1.2.5",
  },
];

function toml(o: { port: number; strictPort: number; pacs: DicomPeer; strict: DicomPeer }) {
  const backend = (name: string, peer: DicomPeer) => `
[backends.${name}]
service = "dicom_scu"
timeout_secs = 10
[backends.${name}.options]
aet = "${peer.aet}"
host = "127.0.0.1"
port = ${peer.port}
local_aet = "GATEWAY_SCU"
`;
  return `
[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GWSCP"
bind_addr = "127.0.0.1"
port = ${o.port}
enable_store = true
storage_dir = "{DIR}/received"

[endpoints.scp_strict]
service = "dicom_scp"
[endpoints.scp_strict.options]
local_aet = "GWSTRICT"
bind_addr = "127.0.0.1"
port = ${o.strictPort}
enable_store = true

[endpoints.web]
service = "http"
[endpoints.web.options]
path_prefix = "/strict"
${backend("pacs", o.pacs)}${backend("strict", o.strict)}
[pipelines.forward]
endpoints = ["scp"]
backends = ["pacs"]

[pipelines.strict]
endpoints = ["scp_strict", "web"]
backends = ["strict"]
`;
}

function out(r: CommandResult): string {
  return `${r.stdout}\n${r.stderr}`;
}

async function run(cmd: string, args: string[]): Promise<CommandResult> {
  return await runCommand(cmd, args, { timeoutMs: 30_000 });
}

/** The Part 10 file storescp wrote for an instance (`<modality>.<SOP instance UID>`). */
async function receivedBy(peer: DicomPeer, sopInstanceUid: string): Promise<P10File | undefined> {
  for await (const e of Deno.readDir(peer.dir)) {
    if (e.isFile && e.name.endsWith(`.${sopInstanceUid}`)) {
      return parseP10(await Deno.readFile(`${peer.dir}/${e.name}`));
    }
  }
  return undefined;
}

function assertSameInstance(actual: P10File, expected: P10File, what: string): void {
  assertEquals(
    actual.meta.transferSyntax,
    expected.meta.transferSyntax,
    `${what}: transfer syntax`,
  );
  assertEquals(actual.meta.sopInstanceUid, expected.meta.sopInstanceUid, `${what}: SOP instance`);
  assertEquals(actual.dataset.length, expected.dataset.length, `${what}: dataset length`);
  assert(
    actual.dataset.every((b, i) => b === expected.dataset[i]),
    `${what}: the dataset bytes differ from the file that was sent`,
  );
}

Deno.test({
  name: "dicom_scp: compressed C-STORE is stored and forwarded in its own transfer syntax",
  ignore: !HAS_DCMTK,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicom-compressed-");
    const sources = await generateInstances(`${dir}/src`, {
      instancesPerSeries: CODECS.length + 1,
      size: 64,
      patientPrefix: "CMP",
    });
    const compressed: { codec: Codec; path: string; file: P10File }[] = [];
    for (const [i, codec] of CODECS.entries()) {
      const path = `${dir}/${i}.dcm`;
      const [cmd, args] = codec.make(sources[i].path, path);
      const made = await run(cmd, args);
      assertEquals(made.code, 0, out(made));
      const file = parseP10(await Deno.readFile(path));
      assertEquals(file.meta.transferSyntax, codec.syntax, `${codec.name} made by ${cmd}`);
      assertEquals(file.meta.sopInstanceUid, sources[i].sopInstanceUid);
      compressed.push({ codec, path, file });
    }
    const pacs = await startStorescp({ aet: "PACS", args: ["+xa"] });
    const strict = await startStorescp({ aet: "STRICT" });
    const port = freePort();
    const strictPort = freePort();
    const gw = await startTestGateway(toml({ port, strictPort, pacs, strict }));
    try {
      for (const { codec, path, file } of compressed) {
        await t.step(`${codec.name}: stored and forwarded unchanged`, async () => {
          const sent = await run("storescu", [
            codec.propose,
            "-aet",
            "MODALITY",
            "-aec",
            "GWSCP",
            "127.0.0.1",
            String(port),
            path,
          ]);
          assertEquals(sent.code, 0, out(sent));
          assert(!/Refused|Failed|Error/i.test(out(sent)), out(sent));
          const kept = parseP10(
            await Deno.readFile(
              `${gw.dir}/received/${sources[0].studyUid}/${file.meta.sopInstanceUid}.dcm`,
            ),
          );
          assertSameInstance(kept, file, `${codec.name} in storage_dir`);
          const forwarded = await receivedBy(pacs, file.meta.sopInstanceUid);
          assert(forwarded, `storescp received no ${codec.name} instance`);
          assertSameInstance(forwarded, file, `${codec.name} at storescp`);
        });
      }

      await t.step(
        "a series on one association: every instance kept and forwarded intact",
        async () => {
          // Instances of two sizes, so the listener's memory grows, shrinks and is reused.
          const series = [
            ...await generateInstances(`${dir}/series/a`, { instancesPerSeries: 4, size: 96 }),
            ...await generateInstances(`${dir}/series/b`, { instancesPerSeries: 4, size: 160 }),
          ];
          const order = [0, 4, 1, 5, 6, 2, 3, 7].map((i) => series[i].path);
          const sent = await run("storescu", [
            "-aet",
            "MODALITY",
            "-aec",
            "GWSCP",
            "127.0.0.1",
            String(port),
            ...order,
          ]);
          assertEquals(sent.code, 0, out(sent));
          for (const instance of series) {
            const file = parseP10(await Deno.readFile(instance.path));
            const kept = parseP10(
              await Deno.readFile(
                `${gw.dir}/received/${instance.studyUid}/${instance.sopInstanceUid}.dcm`,
              ),
            );
            assertSameInstance(kept, file, `${instance.path} in storage_dir`);
            const forwarded = await receivedBy(pacs, instance.sopInstanceUid);
            assert(forwarded, `storescp received no ${instance.path}`);
            assertSameInstance(forwarded, file, `${instance.path} at storescp`);
          }
        },
      );

      await t.step("a PACS accepting only uncompressed data: refused, not transcoded", async () => {
        const [{ path, file }] = compressed;
        const sent = await run("storescu", [
          "-v",
          "-xy",
          "-aec",
          "GWSTRICT",
          "127.0.0.1",
          String(strictPort),
          path,
        ]);
        // The backend's outcome (0x0122, SOP class not supported) is relayed to the sender.
        assertMatch(
          out(sent),
          /Received Store Response \(Refused: SOPClassNotSupported\)/,
          out(sent),
        );
        assertEquals(await receivedBy(strict, file.meta.sopInstanceUid), undefined);
      });

      await t.step(
        "STOW of an uncompressed and a compressed instance of one class to that PACS",
        async () => {
          const plain = await Deno.readFile(sources[CODECS.length].path);
          const jpeg = await Deno.readFile(compressed[0].path);
          const boundary = "b0undary";
          const res = await fetch(`${gw.url}/strict/studies`, {
            method: "POST",
            headers: {
              "content-type": `multipart/related; type="application/dicom"; boundary=${boundary}`,
            },
            body: encodeMultipart([
              { contentType: "application/dicom", body: plain },
              { contentType: "application/dicom", body: jpeg },
            ], boundary) as Uint8Array<ArrayBuffer>,
            signal: AbortSignal.timeout(20_000),
          });
          const body = await res.json() as {
            stored: number;
            failed: number;
            instances: { sop_instance_uid: string; status: string }[];
          };
          assertEquals([res.status, body.stored, body.failed], [202, 1, 1], JSON.stringify(body));
          assertEquals(body.instances[1].sop_instance_uid, compressed[0].file.meta.sopInstanceUid);
          const kept = await receivedBy(strict, sources[CODECS.length].sopInstanceUid);
          assertEquals(kept?.meta.transferSyntax, TS.explicitLE);
          assertEquals(await receivedBy(strict, compressed[0].file.meta.sopInstanceUid), undefined);
        },
      );
    } finally {
      await gw.stop();
      await pacs.stop();
      await strict.stop();
      await removeDir(dir);
    }
  },
});

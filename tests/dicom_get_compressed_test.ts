/**
 * Compressed instances retrieved as stored through the dicom_scu backend (DICOMweb in), against
 * PACS we did not write. Generated CT instances are compressed by DCMTK (JPEG Lossless SV1, JPEG
 * baseline, JPEG-LS lossless, RLE; `dcmcjp2k` is not in Debian's dcmtk, so JPEG 2000 is not made),
 * with a native and a JPEG-LS instance of a class outside `retrieve_sop_classes` (Secondary
 * Capture), held by DCMTK `dcmqrscp` (which cannot decompress, and sends every instance of a
 * class on the first context accepted for it) and by Orthanc (which picks the context in the
 * instance's syntax, and decompresses when there is none):
 * - C-GET proposes one presentation context per storage class and compressed syntax, so a study's
 *   instances come back in the syntax the PACS holds them in, with their pixel data intact; from
 *   dcmqrscp through the retry passes, one compressed syntax at a time;
 * - the Accept header narrows the proposal: asking for Explicit VR Little Endian proposes only
 *   uncompressed syntaxes (Orthanc decompresses, dcmqrscp cannot: 502);
 * - `retrieve_sop_class_lookup` (the default) asks Orthanc for the SOP classes of the study or
 *   instance and proposes those classes in every compressed syntax, although the configured
 *   classes do not include them; without it, Orthanc decompresses the Secondary Capture;
 * - C-MOVE from `dcmqrscp -xs`, whose one context per class lists JPEG Lossless before the
 *   uncompressed syntaxes: the incoming store SCP accepts the requestor's first, so the JPEG
 *   Lossless instance arrives as stored (and, as with DCMTK's `storescp +xa`, dcmqrscp cannot send
 *   a native instance on that context).
 */
import { generateInstances } from "../fixtures/dicom/generate.ts";
import { startDcmqrscp, startOrthanc } from "../fixtures/dicom/peers.ts";
import {
  boundaryOf,
  decodeMultipart,
  parseP10,
  pixelFramesOf,
  readDataset,
  TS,
  writeDataset,
  writeP10,
} from "../gateway/dicom/mod.ts";
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import {
  dicomScuPipelineToml,
  freePort,
  removeDir,
  requirePeer,
  runCommand,
  tempDir,
} from "./support/mod.ts";

const HAS_DCMTK = requirePeer("dcmqrscp", "dcmqrscp", "dcmtk") &&
  requirePeer("dcmcjpeg", "dcmcjpeg", "dcmtk");
const HAS_ORTHANC = HAS_DCMTK && requirePeer("Orthanc", "Orthanc", "orthanc");

const AS_STORED = 'multipart/related; type="application/dicom"; transfer-syntax=*';
const NATIVE = `multipart/related; type="application/dicom"; transfer-syntax=${TS.explicitLE}`;

/** One stored instance: how DCMTK made it and the file the PACS holds. */
interface Stored {
  name: string;
  syntax: string;
  path: string;
  /** The uncompressed file it was made from. */
  source: string;
  study: string;
  series: string;
  sop: string;
}

const CODECS: { name: string; syntax: string; make: (src: string, out: string) => string[] }[] = [
  {
    name: "JPEG Lossless SV1",
    syntax: "1.2.840.10008.1.2.4.70",
    make: (s, o) => ["dcmcjpeg", "+e1", s, o],
  },
  {
    name: "JPEG baseline",
    syntax: "1.2.840.10008.1.2.4.50",
    make: (s, o) => ["dcmcjpeg", "+eb", "+un", s, o],
  },
  {
    name: "JPEG-LS lossless",
    syntax: "1.2.840.10008.1.2.4.80",
    make: (s, o) => ["dcmcjpls", "+el", s, o],
  },
  { name: "RLE lossless", syntax: "1.2.840.10008.1.2.5", make: (s, o) => ["dcmcrle", s, o] },
];

/**
 * Secondary Capture: a class the configured proposal gives no compressed context (the 128-context
 * budget), though archives often hold it compressed.
 */
const SECONDARY_CAPTURE = "1.2.840.10008.5.1.4.1.1.7";

/** Rewrite the native file at `path` as an instance of `sopClassUid`. */
async function reclassify(path: string, sopClassUid: string): Promise<void> {
  const p10 = parseP10(await Deno.readFile(path));
  const dict = readDataset(p10.dataset, p10.meta.transferSyntax);
  dict["00080016"] = { vr: "UI", Value: [sopClassUid] };
  const dataset = writeDataset(dict, p10.meta.transferSyntax);
  await Deno.writeFile(path, writeP10({ ...p10.meta, sopClassUid }, dataset));
}

/**
 * In one series: four compressed CT instances, a native one, and a native and a JPEG-LS instance
 * of a class outside the default proposal.
 */
async function fixtures(dir: string): Promise<Stored[]> {
  const sources = await generateInstances(`${dir}/src`, {
    instancesPerSeries: CODECS.length + 3,
    size: 64,
    patientPrefix: "GETC",
  });
  const [scNative, scSource] = sources.slice(CODECS.length + 1);
  for (const s of [scNative, scSource]) await reclassify(s.path, SECONDARY_CAPTURE);
  const out: Stored[] = [];
  for (const [i, c] of CODECS.entries()) {
    const path = `${dir}/${i}.dcm`;
    const [cmd, ...args] = c.make(sources[i].path, path);
    const r = await runCommand(cmd, args);
    assertEquals(r.code, 0, `${cmd}: ${r.stderr}${r.stdout}`);
    assertEquals(parseP10(await Deno.readFile(path)).meta.transferSyntax, c.syntax, c.name);
    const s = sources[i];
    out.push({
      name: c.name,
      syntax: c.syntax,
      path,
      source: s.path,
      study: s.studyUid,
      series: s.seriesUid,
      sop: s.sopInstanceUid,
    });
  }
  const scJls = `${dir}/sc-jls.dcm`;
  const r = await runCommand("dcmcjpls", ["+el", scSource.path, scJls]);
  assertEquals(r.code, 0, `dcmcjpls: ${r.stderr}${r.stdout}`);
  const native = (
    name: string,
    n: typeof scNative,
    path = n.path,
    syntax: string = TS.explicitLE,
  ): Stored => ({
    name,
    syntax,
    path,
    source: n.path,
    study: n.studyUid,
    series: n.seriesUid,
    sop: n.sopInstanceUid,
  });
  return [
    ...out,
    native("native", sources[CODECS.length]),
    native("Secondary Capture native", scNative),
    native("Secondary Capture JPEG-LS", scSource, scJls, "1.2.840.10008.1.2.4.80"),
  ];
}

function backendToml(
  name: string,
  peer: { aet: string; port: number },
  options = "",
): string {
  return dicomScuPipelineToml({ name, peer, options });
}

function byName(stored: Stored[], name: string): Stored {
  return stored.find((s) => s.name === name)!;
}

function instanceUrl(base: string, s: Stored): string {
  return `${base}/studies/${s.study}/series/${s.series}/instances/${s.sop}`;
}

/** The Part 10 files of a WADO-RS instances answer. */
async function instances(res: Response): Promise<Uint8Array[]> {
  const type = res.headers.get("content-type") ?? "";
  assertEquals(res.status, 200, `${type} ${await res.clone().text()}`);
  const body = new Uint8Array(await res.arrayBuffer());
  return decodeMultipart(body, boundaryOf(type)!).map((p) => p.body);
}

/** The frame of a single-frame file (the fragments of an encapsulated one). */
function frameOf(file: Uint8Array): Uint8Array {
  const pixels = pixelFramesOf(file);
  assert(pixels, "no pixel data");
  return pixels.frame(1);
}

/** `got` is `s` as the PACS holds it: same instance, same syntax, same pixel data bytes. */
async function assertAsStored(got: Uint8Array | undefined, s: Stored): Promise<void> {
  assert(got, `${s.name}: not retrieved`);
  const { meta } = parseP10(got);
  assertEquals(meta.sopInstanceUid, s.sop, s.name);
  assertEquals(meta.transferSyntax, s.syntax, `${s.name}: transfer syntax`);
  assertEquals(frameOf(got), frameOf(await Deno.readFile(s.path)), `${s.name}: pixel data`);
}

async function errorCode(res: Response): Promise<[number, string]> {
  const body = await res.json() as { error: { code: string } };
  return [res.status, body.error.code];
}

/** `got` is `s` decompressed: Explicit VR Little Endian, the pixels of its source. */
async function assertNative(got: Uint8Array | undefined, s: Stored): Promise<void> {
  assert(got, `${s.name}: not retrieved`);
  assertEquals(parseP10(got).meta.transferSyntax, TS.explicitLE, `${s.name}: transfer syntax`);
  assertEquals(frameOf(got), frameOf(await Deno.readFile(s.source)), `${s.name}: pixel data`);
}

/**
 * A study retrieval brings every instance back in its own syntax, except those in `native`: their
 * class is not in retrieve_sop_classes, so the PACS gets no compressed context for them.
 */
async function checkStudy(base: string, stored: Stored[], native: Stored[] = []): Promise<void> {
  const res = await fetch(`${base}/studies/${stored[0].study}`, {
    headers: { accept: AS_STORED },
  });
  const files = await instances(res);
  assertEquals(files.length, stored.length);
  for (const s of stored) {
    const got = files.find((f) => parseP10(f).meta.sopInstanceUid === s.sop);
    await (native.includes(s) ? assertNative(got, s) : assertAsStored(got, s));
  }
}

Deno.test({
  name: "C-GET of JPEG, JPEG-LS and RLE instances from dcmqrscp: received as stored",
  ignore: !HAS_DCMTK,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicom-get-compressed-");
    const stored = await fixtures(dir);
    const qr = await startDcmqrscp(stored.map((s) => s.path), { acceptCompressed: true });
    let gw: TestGateway | undefined;
    try {
      gw = await startTestGateway(
        backendToml("get", qr) +
          backendToml("plain", qr, "retrieve_transfer_syntaxes = []") +
          backendToml("lookup", qr, "retrieve_sop_class_lookup = true"),
      );
      const base = `${gw.url}/get`;
      await t.step(
        "a study: every instance in its own transfer syntax (Secondary Capture JPEG-LS by a pass)",
        () => checkStudy(base, stored),
      );
      await t.step("instances without Accept: as stored", async () => {
        for (const s of stored) {
          const [file] = await instances(await fetch(instanceUrl(base, s)));
          await assertAsStored(file, s);
        }
      });
      await t.step("frames of the RLE instance: the stored fragments", async () => {
        const rle = stored.find((s) => s.syntax === "1.2.840.10008.1.2.5")!;
        const res = await fetch(`${instanceUrl(base, rle)}/frames/1`, {
          headers: { accept: "image/dicom-rle" },
        });
        assertEquals(res.status, 200);
        assertEquals(
          res.headers.get("content-type"),
          `image/dicom-rle; transfer-syntax=${rle.syntax}`,
        );
        assertEquals(
          new Uint8Array(await res.arrayBuffer()),
          frameOf(await Deno.readFile(rle.path)),
        );
      });
      await t.step(
        "Accept Explicit VR Little Endian: uncompressed proposed, dcmqrscp fails",
        async () => {
          const jpeg = stored[0];
          const res = await fetch(instanceUrl(base, jpeg), { headers: { accept: NATIVE } });
          assertEquals(await errorCode(res), [502, "dicom_failure_status"]);
          const native = byName(stored, "native");
          const [file] = await instances(
            await fetch(instanceUrl(base, native), { headers: { accept: NATIVE } }),
          );
          await assertAsStored(file, native);
        },
      );
      await t.step("retrieve_transfer_syntaxes = []: uncompressed contexts only", async () => {
        const res = await fetch(instanceUrl(`${gw!.url}/plain`, stored[2]));
        assertEquals(await errorCode(res), [502, "dicom_failure_status"]);
      });
      await t.step("SOP class lookup unanswered (dcmqrscp): the configured proposal", async () => {
        for (const s of stored) {
          const [file] = await instances(await fetch(instanceUrl(`${gw!.url}/lookup`, s)));
          await assertAsStored(file, s);
        }
      });
    } finally {
      await gw?.stop();
      await qr.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name: "C-GET of compressed instances from Orthanc: as stored, native on request, class lookup",
  ignore: !HAS_ORTHANC,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicom-get-compressed-orthanc-");
    const stored = await fixtures(dir);
    // Orthanc serves C-GET only to AEs it knows.
    const orthanc = await startOrthanc({ known: [{ aet: "GATEWAY_SCU", port: freePort() }] });
    let gw: TestGateway | undefined;
    try {
      for (const s of stored) await orthanc.upload(await Deno.readFile(s.path));
      const mrOnly = 'retrieve_sop_classes = ["MRImageStorage"]';
      const noLookup = "retrieve_sop_class_lookup = false";
      gw = await startTestGateway(
        backendToml("get", orthanc) +
          backendToml("lookup", orthanc, mrOnly) +
          backendToml("nolookup", orthanc, `${mrOnly}\n${noLookup}`) +
          backendToml("configured", orthanc, noLookup),
      );
      const base = `${gw.url}/get`;
      await t.step(
        "a study with the default lookup: every instance as stored, Secondary Capture included",
        () => checkStudy(base, stored),
      );
      await t.step(
        "a study without the lookup: the Secondary Capture outside retrieve_sop_classes decompressed",
        () =>
          checkStudy(`${gw!.url}/configured`, stored, [
            byName(stored, "Secondary Capture JPEG-LS"),
          ]),
      );
      await t.step(
        "a study through a backend configured for MR only: all as stored (the lookup)",
        () => checkStudy(`${gw!.url}/lookup`, stored),
      );
      await t.step("Accept Explicit VR Little Endian: Orthanc decompresses", async () => {
        for (const s of stored.filter((s) => s.syntax !== "1.2.840.10008.1.2.4.50")) {
          const [file] = await instances(
            await fetch(instanceUrl(base, s), { headers: { accept: NATIVE } }),
          );
          await assertNative(file, s);
        }
      });
      const jls = byName(stored, "JPEG-LS lossless");
      const jlsFrame = { headers: { accept: 'multipart/related; type="image/jls"' } };
      await t.step(
        "lookup: a CT instance outside retrieve_sop_classes comes as stored",
        async () => {
          const res = await fetch(`${instanceUrl(`${gw!.url}/lookup`, jls)}/frames/1`, jlsFrame);
          assertEquals(res.status, 200, await res.clone().text());
          const type = res.headers.get("content-type")!;
          const [part] = decodeMultipart(
            new Uint8Array(await res.arrayBuffer()),
            boundaryOf(type)!,
          );
          assertEquals(part.body, frameOf(await Deno.readFile(jls.path)));
        },
      );
      await t.step("without the lookup Orthanc decompresses it: image/jls is 406", async () => {
        const res = await fetch(`${instanceUrl(`${gw!.url}/nolookup`, jls)}/frames/1`, jlsFrame);
        assertEquals(await errorCode(res), [406, "not_acceptable"]);
      });
    } finally {
      await gw?.stop();
      await orthanc.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name: "C-MOVE from dcmqrscp -xs (JPEG Lossless and uncompressed in one context): as stored",
  ignore: !HAS_DCMTK,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicom-move-compressed-");
    const stored = await fixtures(dir);
    const storePort = freePort();
    const qr = await startDcmqrscp(stored.map((s) => s.path), {
      args: ["-xs"],
      known: [{ aet: "GATEWAY_SCU", port: storePort }],
    });
    let gw: TestGateway | undefined;
    try {
      gw = await startTestGateway(
        backendToml(
          "move",
          qr,
          `dimse_retrieve_mode = "move"\nincoming_store_port = ${storePort}`,
        ),
      );
      const base = `${gw.url}/move`;
      await t.step("the JPEG Lossless instance arrives in JPEG Lossless", async () => {
        const [file] = await instances(
          await fetch(instanceUrl(base, stored[0]), { headers: { accept: AS_STORED } }),
        );
        await assertAsStored(file, stored[0]);
      });
      await t.step("a native instance: dcmqrscp cannot compress it for that context", async () => {
        // The requestor listed JPEG Lossless first, so it must send in it (PS3.8); dcmqrscp has
        // no encoder and fails the sub-operation, as it does towards DCMTK's storescp +xa.
        const res = await fetch(instanceUrl(base, byName(stored, "native")));
        assertEquals(await errorCode(res), [502, "dicom_failure_status"]);
      });
    } finally {
      await gw?.stop();
      await qr.stop();
      await removeDir(dir);
    }
  },
});

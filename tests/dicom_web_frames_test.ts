/**
 * WADO-RS frames and bulk data through the dicom_scu bridge, against PACS we did not write:
 * DCMTK `dcmqrscp` (C-GET of native and compressed instances as stored, C-MOVE of native ones)
 * and Orthanc (C-GET and C-MOVE of compressed instances as stored, native on request, and its
 * DICOMweb plugin as the reference for the same frames).
 * Instances are generated multi-frame Secondary Captures; the compressed ones are made by DCMTK
 * (`dcmcrle`, `dcmcjpls`, `dcmcjpeg`) with and without a Basic Offset Table and with several
 * fragments per frame. A served native frame must equal its source
 * bytes; a served compressed frame must decode (DCMTK again) to its source bytes.
 */
import {
  compress,
  decompressedPixels,
  generateMultiframe,
  type MultiframeInstance,
  singleFrameCopy,
} from "../fixtures/dicom/multiframe.ts";
import {
  type OrthancPeer,
  requireDicomwebPlugin,
  startDcmqrscp,
  startOrthanc,
} from "../fixtures/dicom/peers.ts";
import { boundaryOf, decodeMultipart, parseP10, pixelFramesOf, TS } from "../gateway/dicom/mod.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
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
const HAS_ORTHANC = requirePeer("Orthanc", "Orthanc", "orthanc") && requireDicomwebPlugin();

const OCTET = 'multipart/related; type="application/octet-stream"';
const ANY_SYNTAX = `${OCTET}; transfer-syntax=*`;

/** An instance of the fixture set: its source frames and, when compressed, its stored file. */
interface Fixture extends MultiframeInstance {
  /** The file the PACS holds (compressed variants differ from `path`). */
  stored: string;
  transferSyntax: string;
  mediaType: string;
}

/** Binary values for bulk data: an ICC profile at the top level and one inside a sequence. */
const ICC_TOP = Uint8Array.from({ length: 2000 }, (_, i) => (i * 31 + 7) & 0xff);
const ICC_NESTED = Uint8Array.from({ length: 1500 }, (_, i) => (i * 17 + 3) & 0xff);

function base64(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes));
}

async function nativeFixture(
  dir: string,
  name: string,
  opts: Parameters<typeof generateMultiframe>[1],
): Promise<Fixture> {
  const m = await generateMultiframe(`${dir}/${name}.dcm`, opts);
  return {
    ...m,
    stored: m.path,
    transferSyntax: opts.transferSyntax ?? TS.explicitLE,
    mediaType: "application/octet-stream",
  };
}

async function compressedFixture(
  dir: string,
  name: string,
  kind: Parameters<typeof compress>[2],
  mediaType: string,
  opts: Parameters<typeof compress>[3],
  frames = 3,
): Promise<Fixture> {
  const m = await generateMultiframe(`${dir}/${name}.src.dcm`, {
    frames,
    rows: 64,
    columns: 64,
    seed: name.length * 7 + frames,
  });
  const stored = `${dir}/${name}.dcm`;
  const transferSyntax = await compress(m.path, stored, kind, opts);
  return { ...m, stored, transferSyntax, mediaType };
}

/** The fixture set: native 16-bit and RGB, and four compressed layouts. */
async function fixtures(dir: string) {
  // 4 frames of 16x12 16-bit pixels: 1536 bytes of pixel data, over the 1 KiB inline limit.
  const native = await nativeFixture(dir, "native16", {
    frames: 4,
    rows: 16,
    columns: 12,
    extra: {
      "00282000": { vr: "OB", InlineBinary: base64(ICC_TOP) },
      "00480105": {
        vr: "SQ",
        Value: [{ "00282000": { vr: "OB", InlineBinary: base64(ICC_NESTED) } }],
      },
    },
  });
  const rgb = await nativeFixture(dir, "rgb8", {
    frames: 3,
    rows: 3,
    columns: 5,
    samplesPerPixel: 3,
    bitsAllocated: 8,
    transferSyntax: TS.implicitLE,
  });
  const compressed = [
    await compressedFixture(dir, "rle-bot", "rle", "image/dicom-rle", {}),
    await compressedFixture(dir, "jls-nobot", "jpegLs", "image/jls", { bot: false }),
    await compressedFixture(dir, "jpeg-fragments-bot", "jpegLossless", "image/jpeg", {
      fragmentKb: 1,
    }),
    await compressedFixture(dir, "jpeg-fragments-nobot", "jpegLossless", "image/jpeg", {
      fragmentKb: 1,
      bot: false,
    }),
    await compressedFixture(
      dir,
      "jpeg-single",
      "jpegLossless",
      "image/jpeg",
      { fragmentKb: 1, bot: false },
      1,
    ),
  ];
  return { native, rgb, compressed };
}

function framesUrl(base: string, f: Fixture, list: string): string {
  return `${base}/studies/${f.studyUid}/series/${f.seriesUid}/instances/${f.sopInstanceUid}/frames/${list}`;
}

/** The parts of a multipart answer, after checking status and top-level type. */
async function parts(
  res: Response,
  type: string,
  transferSyntax: string,
): Promise<{ type: string; body: Uint8Array }[]> {
  const contentType = res.headers.get("content-type") ?? "";
  assertEquals(res.status, 200, `${contentType} ${await res.clone().text()}`);
  assertMatch(contentType, /^multipart\/related; /);
  assert(contentType.includes(`type="${type}"`), contentType);
  assert(contentType.includes(`transfer-syntax=${transferSyntax}`), contentType);
  const body = new Uint8Array(await res.arrayBuffer());
  return decodeMultipart(body, boundaryOf(contentType)!).map((p) => ({
    type: p.headers.get("content-type") ?? "",
    body: p.body,
  }));
}

async function errorOf(res: Response): Promise<[number, string]> {
  const text = await res.text();
  assertMatch(res.headers.get("content-type") ?? "", /json/, text);
  return [res.status, (JSON.parse(text) as { error: { code: string } }).error.code];
}

/** Native frames: exact bytes, order of the list, single part, the error statuses. */
async function checkNativeFrames(
  t: Deno.TestContext,
  base: string,
  native: Fixture,
  rgb: Fixture,
): Promise<void> {
  await t.step("one frame, a list in its order, every frame (16-bit, 4 frames)", async () => {
    const one = await parts(
      await fetch(framesUrl(base, native, "2")),
      "application/octet-stream",
      TS.explicitLE,
    );
    assertEquals(one.map((p) => p.body), [native.frames[1]]);
    assertEquals(one[0].type, `application/octet-stream; transfer-syntax=${TS.explicitLE}`);
    const list = await parts(
      await fetch(framesUrl(base, native, "4,1,3"), { headers: { accept: OCTET } }),
      "application/octet-stream",
      TS.explicitLE,
    );
    assertEquals(list.map((p) => p.body), [native.frames[3], native.frames[0], native.frames[2]]);
    const all = await parts(
      await fetch(framesUrl(base, native, "1%2C2%2C3%2C4")),
      "application/octet-stream",
      TS.explicitLE,
    );
    assertEquals(all.map((p) => p.body), native.frames);
  });
  await t.step("RGB 8-bit, 45-byte frames, stored Implicit VR Little Endian", async () => {
    const all = await parts(
      await fetch(framesUrl(base, rgb, "3,2,1")),
      "application/octet-stream",
      TS.explicitLE,
    );
    assertEquals(all.map((p) => p.body), [rgb.frames[2], rgb.frames[1], rgb.frames[0]]);
    assertEquals(all[0].body.length, 45);
  });
  await t.step("Accept application/octet-stream: one frame as a single part", async () => {
    const res = await fetch(framesUrl(base, native, "3"), {
      headers: { accept: "application/octet-stream" },
    });
    assertEquals(res.status, 200);
    assertEquals(
      res.headers.get("content-type"),
      `application/octet-stream; transfer-syntax=${TS.explicitLE}`,
    );
    assertEquals(new Uint8Array(await res.arrayBuffer()), native.frames[2]);
  });
  await t.step("404 beyond NumberOfFrames, 400 malformed lists, 406 unacceptable", async () => {
    assertEquals(await errorOf(await fetch(framesUrl(base, native, "5"))), [404, "not_found"]);
    assertEquals(await errorOf(await fetch(framesUrl(base, native, "1,9"))), [404, "not_found"]);
    for (const list of ["0", "1,,2", "x", "2,2", "1-3"]) {
      assertEquals(
        await errorOf(await fetch(framesUrl(base, native, list))),
        [400, "invalid_dicom_request"],
        list,
      );
    }
    const jpeg = await fetch(framesUrl(base, native, "1"), {
      headers: { accept: 'multipart/related; type="image/jpeg"' },
    });
    assertEquals(await errorOf(jpeg), [406, "not_acceptable"]);
    const json = await fetch(framesUrl(base, native, "1"), {
      headers: { accept: "application/dicom+json" },
    });
    assertEquals(await errorOf(json), [406, "not_acceptable"]);
    const two = await fetch(framesUrl(base, native, "1,2"), {
      headers: { accept: "application/octet-stream" },
    });
    assertEquals(await errorOf(two), [406, "not_acceptable"]);
    // dcmqrscp answers Success with no sub-operation (404), Orthanc a failure status (502).
    const missing = { ...native, sopInstanceUid: `${native.seriesUid}.999` };
    const [status] = await errorOf(await fetch(framesUrl(base, missing, "1")));
    assert(status === 404 || status === 502, String(status));
  });
  await t.step("HEAD answers the headers of the GET", async () => {
    const res = await fetch(framesUrl(base, native, "1"), { method: "HEAD" });
    assertEquals(res.status, 200);
    assertMatch(
      res.headers.get("content-type") ?? "",
      /^multipart\/related; type="application\/octet-stream"/,
    );
    assertEquals((await res.arrayBuffer()).byteLength, 0);
  });
}

type Json = Record<
  string,
  { vr: string; Value?: unknown[]; BulkDataURI?: string; InlineBinary?: string }
>;

/** Metadata names large binary values by BulkDataURI; each resolves to the value's bytes. */
async function checkBulkData(t: Deno.TestContext, base: string, native: Fixture): Promise<void> {
  const instance =
    `${base}/studies/${native.studyUid}/series/${native.seriesUid}/instances/${native.sopInstanceUid}`;
  let meta: Json = {};
  await t.step(
    "metadata: BulkDataURIs for pixel data and ICC profiles, small values inline",
    async () => {
      const res = await fetch(`${instance}/metadata`);
      assertEquals(res.status, 200);
      [meta] = await res.json() as Json[];
      const prefix =
        `${base}/bulkdata/${native.studyUid}/${native.seriesUid}/${native.sopInstanceUid}/`;
      assertEquals(meta["7FE00010"].BulkDataURI, `${prefix}7FE00010`);
      assertEquals(meta["00282000"].BulkDataURI, `${prefix}00282000`);
      const nested = meta["00480105"].Value?.[0] as Json;
      assertEquals(nested["00282000"].BulkDataURI, `${prefix}00480105/0/00282000`);
      assertEquals(meta["00280010"].Value, [16]);
      assertEquals(meta["7FE00010"].InlineBinary, undefined);
    },
  );
  await t.step("bulk data URIs resolve to the bytes (multipart and single part)", async () => {
    const pixels = await parts(
      await fetch(meta["7FE00010"].BulkDataURI!),
      "application/octet-stream",
      TS.explicitLE,
    );
    const joined = new Uint8Array(native.frames.reduce((n, f) => n + f.length, 0));
    native.frames.forEach((f, i) => joined.set(f, i * f.length));
    assertEquals(pixels.map((p) => p.body), [joined]);
    const top = await parts(
      await fetch(meta["00282000"].BulkDataURI!),
      "application/octet-stream",
      TS.explicitLE,
    );
    assertEquals(top.map((p) => p.body), [ICC_TOP]);
    const nestedUri = ((meta["00480105"].Value?.[0]) as Json)["00282000"].BulkDataURI!;
    const single = await fetch(nestedUri, { headers: { accept: "application/octet-stream" } });
    assertEquals(single.status, 200);
    assertEquals(new Uint8Array(await single.arrayBuffer()), ICC_NESTED);
  });
  await t.step("bulk data: 404 for a value that is not there or not binary, 406", async () => {
    const prefix =
      `${base}/bulkdata/${native.studyUid}/${native.seriesUid}/${native.sopInstanceUid}`;
    assertEquals(await errorOf(await fetch(`${prefix}/00420011`)), [404, "not_found"]);
    assertEquals(await errorOf(await fetch(`${prefix}/00100010`)), [404, "not_found"]);
    assertEquals(await errorOf(await fetch(`${base}/bulkdata/not-a-uri`)), [404, "not_found"]);
    const json = await fetch(`${prefix}/00282000`, { headers: { accept: "application/json" } });
    assertEquals(await errorOf(json), [406, "not_acceptable"]);
  });
}

/**
 * Compressed frames: labelled with their syntax; every frame decodes to its source. With C-MOVE
 * the PACS picks the syntax, so a native-only Accept is 406 here; with C-GET it narrows the
 * proposal to uncompressed syntaxes instead (checked by the callers).
 */
async function checkCompressedFrames(
  t: Deno.TestContext,
  base: string,
  compressed: Fixture[],
  dir: string,
  mode: "get" | "move",
): Promise<void> {
  for (const f of compressed) {
    const name = f.stored.slice(f.stored.lastIndexOf("/") + 1);
    await t.step(`${name}: every frame, as stored, decodes to its source`, async () => {
      const list = f.frames.map((_, i) => i + 1).reverse().join(",");
      const got = await parts(await fetch(framesUrl(base, f, list)), f.mediaType, f.transferSyntax);
      assertEquals(got.length, f.frames.length);
      const stored = await Deno.readFile(f.stored);
      for (const [i, p] of got.entries()) {
        assertEquals(p.type, `${f.mediaType}; transfer-syntax=${f.transferSyntax}`);
        const n = f.frames.length - i;
        const decoded = await decompressedPixels(singleFrameCopy(stored, p.body), dir);
        assertEquals(decoded, f.frames[n - 1], `${name} frame ${n}`);
      }
    });
  }
  const f = compressed[2];
  await t.step("compressed: octet-stream only with transfer-syntax=*", async () => {
    if (mode === "move") {
      const refused = await fetch(framesUrl(base, f, "1"), { headers: { accept: OCTET } });
      assertEquals(await errorOf(refused), [406, "not_acceptable"]);
    }
    const viaStar = await parts(
      await fetch(framesUrl(base, f, "1"), { headers: { accept: ANY_SYNTAX } }),
      "application/octet-stream",
      f.transferSyntax,
    );
    const asStored = await parts(
      await fetch(framesUrl(base, f, "1")),
      f.mediaType,
      f.transferSyntax,
    );
    assertEquals(viaStar.map((p) => p.body), asStored.map((p) => p.body));
  });
  await t.step("compressed pixel data as bulk data: one part per frame", async () => {
    const instance =
      `${base}/studies/${f.studyUid}/series/${f.seriesUid}/instances/${f.sopInstanceUid}`;
    const [meta] = await (await fetch(`${instance}/metadata`)).json() as Json[];
    const bulk = await parts(
      await fetch(meta["7FE00010"].BulkDataURI!),
      f.mediaType,
      f.transferSyntax,
    );
    const frames = await parts(
      await fetch(framesUrl(base, f, "1,2,3")),
      f.mediaType,
      f.transferSyntax,
    );
    assertEquals(bulk.map((p) => p.body), frames.map((p) => p.body));
  });
}

/** The fixtures' classes, offered in the compressed syntaxes by C-GET (not in the defaults). */
const MULTIFRAME_CLASSES = JSON.stringify([
  "MultiFrameGrayscaleByteSecondaryCaptureImageStorage",
  "MultiFrameGrayscaleWordSecondaryCaptureImageStorage",
  "MultiFrameTrueColorSecondaryCaptureImageStorage",
]);

function bridgeToml(
  name: string,
  prefix: string,
  peer: { aet: string; port: number },
  mode: "get" | "move",
  storePort: number,
  service = "dicomweb",
): string {
  return dicomScuPipelineToml({
    name,
    prefix,
    peer,
    service,
    options: `dimse_retrieve_mode = "${mode}"
incoming_store_port = ${storePort}
retrieve_sop_classes = ${MULTIFRAME_CLASSES}`,
  });
}

Deno.test({
  name: "WADO-RS frames and bulk data via dicom_scu against dcmqrscp (C-GET, C-MOVE)",
  ignore: !HAS_DCMTK,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicomweb-frames-");
    const { native, rgb, compressed } = await fixtures(dir);
    const storePort = freePort();
    const qr = await startDcmqrscp([native, rgb, ...compressed].map((f) => f.stored), {
      known: [{ aet: "GATEWAY_SCU", port: storePort }],
      acceptCompressed: true,
    });
    let gw: TestGateway | undefined;
    try {
      gw = await startTestGateway(
        bridgeToml("get", "/get", qr, "get", storePort) +
          bridgeToml("move", "/move", qr, "move", storePort) +
          bridgeToml("pacs", "/pacs", qr, "get", storePort, "http"),
      );
      const g = gw;
      await t.step(
        "C-GET: native frames",
        (t) => checkNativeFrames(t, `${g.url}/get`, native, rgb),
      );
      await t.step("C-GET: bulk data", (t) => checkBulkData(t, `${g.url}/get`, native));
      await t.step("C-MOVE: native frames", async () => {
        const got = await parts(
          await fetch(framesUrl(`${g.url}/move`, native, "2,4")),
          "application/octet-stream",
          TS.explicitLE,
        );
        assertEquals(got.map((p) => p.body), [native.frames[1], native.frames[3]]);
      });
      // dcmqrscp cannot decompress; C-GET offers the compressed syntaxes, and as dcmqrscp sends
      // on the first context of a class the backend asks again one syntax at a time.
      await t.step(
        "C-GET: compressed frames as stored",
        (t) => checkCompressedFrames(t, `${g.url}/get`, compressed, dir, "get"),
      );
      await t.step("C-GET, Accept native: only uncompressed proposed, dcmqrscp fails", async () => {
        const res = await fetch(framesUrl(`${g.url}/get`, compressed[0], "1"), {
          headers: { accept: OCTET },
        });
        assertEquals(await errorOf(res), [502, "dicom_failure_status"]);
      });
      await t.step("an http endpoint in front of dicom_scu serves frames too", async () => {
        const got = await parts(
          await fetch(framesUrl(`${g.url}/pacs`, native, "1")),
          "application/octet-stream",
          TS.explicitLE,
        );
        assertEquals(got.map((p) => p.body), [native.frames[0]]);
        const bad = await fetch(framesUrl(`${g.url}/pacs`, native, "0"));
        assertEquals(await errorOf(bad), [400, "invalid_dicom_request"]);
      });
    } finally {
      await gw?.stop();
      await qr.stop();
      await removeDir(dir);
    }
  },
});

function orthancToml(orthanc: OrthancPeer, storePort: number): string {
  return bridgeToml("get", "/get", orthanc, "get", storePort) +
    bridgeToml("move", "/move", orthanc, "move", storePort) + `
[endpoints.web]
service = "dicomweb"
[endpoints.web.options]
path_prefix = "/web"
[backends.web]
service = "dicomweb"
[backends.web.options]
base_url = "${orthanc.dicomweb}"
[pipelines.web]
endpoints = ["web"]
backends = ["web"]
`;
}

Deno.test({
  name: "WADO-RS frames via dicom_scu against Orthanc, compared with Orthanc's own DICOMweb frames",
  ignore: !(HAS_ORTHANC && HAS_DCMTK),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicomweb-frames-orthanc-");
    const { native, rgb, compressed } = await fixtures(dir);
    const storePort = freePort();
    const orthanc = await startOrthanc({
      dicomweb: true,
      known: [{ aet: "GATEWAY_SCU", port: storePort }],
    });
    let gw: TestGateway | undefined;
    try {
      for (const f of [native, rgb, ...compressed]) {
        await orthanc.upload(await Deno.readFile(f.stored));
      }
      gw = await startTestGateway(orthancToml(orthanc, storePort));
      const g = gw;
      await t.step(
        "C-GET: native frames",
        (t) => checkNativeFrames(t, `${g.url}/get`, native, rgb),
      );
      await t.step("native frames equal Orthanc-dicomweb's for the same request", async () => {
        for (const list of ["1", "3,1", "1,2,3,4"]) {
          const ours = await parts(
            await fetch(framesUrl(`${g.url}/get`, native, list), { headers: { accept: OCTET } }),
            "application/octet-stream",
            TS.explicitLE,
          );
          const res = await fetch(framesUrl(`${g.url}/web`, native, list), {
            headers: { accept: OCTET },
          });
          assertEquals(res.status, 200);
          const type = res.headers.get("content-type")!;
          const theirs = decodeMultipart(
            new Uint8Array(await res.arrayBuffer()),
            boundaryOf(type)!,
          );
          assertEquals(ours.map((p) => p.body), theirs.map((p) => p.body), list);
        }
      });
      await t.step(
        "C-MOVE: compressed frames",
        (t) => checkCompressedFrames(t, `${g.url}/move`, compressed, dir, "move"),
      );
      await t.step("compressed frames equal Orthanc-dicomweb's as-stored frames", async () => {
        // Orthanc cannot split several fragments per frame without an offset table (it answers
        // 400 "Bad file format"); the gateway's answer for that one is checked by decoding above.
        for (const f of compressed.filter((c) => !c.stored.endsWith("jpeg-fragments-nobot.dcm"))) {
          const list = f.frames.map((_, i) => i + 1).join(",");
          const ours = await parts(
            await fetch(framesUrl(`${g.url}/move`, f, list), { headers: { accept: ANY_SYNTAX } }),
            "application/octet-stream",
            f.transferSyntax,
          );
          const res = await fetch(framesUrl(`${g.url}/web`, f, list), {
            headers: { accept: ANY_SYNTAX },
          });
          assertEquals(res.status, 200, await res.clone().text());
          const type = res.headers.get("content-type")!;
          const theirs = decodeMultipart(
            new Uint8Array(await res.arrayBuffer()),
            boundaryOf(type)!,
          );
          assertEquals(ours.map((p) => p.body), theirs.map((p) => p.body), f.stored);
        }
      });
      await t.step(
        "C-GET: compressed frames as stored",
        (t) => checkCompressedFrames(t, `${g.url}/get`, compressed, dir, "get"),
      );
      await t.step(
        "C-GET, Accept native: only uncompressed proposed, Orthanc transcodes",
        async () => {
          const f = compressed[0];
          const got = await parts(
            await fetch(framesUrl(`${g.url}/get`, f, "2"), { headers: { accept: OCTET } }),
            "application/octet-stream",
            TS.explicitLE,
          );
          assertEquals(got.map((p) => p.body), [f.frames[1]]);
        },
      );
    } finally {
      await gw?.stop();
      await orthanc.stop();
      await removeDir(dir);
    }
  },
});

Deno.test({
  name: "frames of an Explicit VR Big Endian file (DCMTK dcmconv +tb) come out little endian",
  ignore: !requirePeer("dcmconv", "dcmconv", "dcmtk"),
  fn: async () => {
    const dir = await tempDir("frames-be-");
    try {
      const source = await generateMultiframe(`${dir}/le.dcm`, { frames: 3, rows: 4, columns: 5 });
      const r = await runCommand("dcmconv", ["+tb", source.path, `${dir}/be.dcm`]);
      assertEquals(r.code, 0, r.stderr);
      const file = await Deno.readFile(`${dir}/be.dcm`);
      assertEquals(parseP10(file).meta.transferSyntax, TS.explicitBE);
      const pixels = pixelFramesOf(file)!;
      assertEquals([1, 2, 3].map((n) => pixels.frame(n)), source.frames);
    } finally {
      await removeDir(dir);
    }
  },
});

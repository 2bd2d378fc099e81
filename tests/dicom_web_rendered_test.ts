/**
 * WADO-RS rendered and thumbnail resources against Orthanc (with its DICOMweb plugin), with DCMTK
 * as the reference renderer:
 * - through a `dicomweb` backend the routes reach Orthanc, and the gateway answers what Orthanc
 *   answers (status, type and bytes);
 * - through the `dicom_scu` bridge the gateway C-GETs the instance from Orthanc and renders the
 *   frame itself: its PNG equals (within one grey level) what DCMTK's `dcmj2pnm` makes of the same
 *   stored file with the same window, for a native CT, JPEG lossless (SV1) and JPEG baseline
 *   instances (the baseline within two: two JPEG decoders), and a JPEG-LS one that
 *   Orthanc decompresses for the gateway because the C-GET offers no JPEG-LS context;
 * - viewport and thumbnail sizes, JPEG output, and the errors: 406 for an unacceptable type, 400
 *   for a bad parameter, 404 for a missing frame, 501 for a whole study on the bridge.
 */
import jpeg from "jpeg-js";
import { decode as decodePng } from "fast-png";
import { type GeneratedInstance, generateInstances } from "../fixtures/dicom/generate.ts";
import { type OrthancPeer, requireDicomwebPlugin, startOrthanc } from "../fixtures/dicom/peers.ts";
import { assert, assertEquals } from "./assert.ts";
import { startTestGateway, type TestGateway } from "./harness.ts";
import {
  dicomScuPipelineToml,
  dicomwebPipelineToml,
  freePort,
  removeDir,
  requirePeer,
  runCommand,
  tempDir,
} from "./support/mod.ts";

const HAS_PEERS = requirePeer("Orthanc", "Orthanc", "orthanc") && requireDicomwebPlugin() &&
  requirePeer("dcmj2pnm", "dcmj2pnm", "dcmtk") && requirePeer("dcmcjpls", "dcmcjpls", "dcmtk");

/** `/web` forwards to Orthanc's DICOMweb plugin; `/bridge` speaks DIMSE to it. */
function toml(orthanc: OrthancPeer): string {
  return dicomwebPipelineToml("web", orthanc.dicomweb) +
    dicomScuPipelineToml({ name: "bridge", peer: orthanc });
}

/** One stored instance: the file Orthanc holds (for DCMTK) and its URL path. */
interface Stored {
  name: string;
  path: string;
  /** What DCMTK renders from (JPEG-LS: the native source, dcmj2pnm reads no JPEG-LS). */
  reference: string;
  /** Largest grey-level difference allowed against DCMTK. */
  tolerance: number;
  url: string;
}

async function run(cmd: string, args: string[]): Promise<void> {
  const r = await runCommand(cmd, args);
  assertEquals(r.code, 0, `${cmd} ${args.join(" ")}: ${r.stderr}${r.stdout}`);
}

async function fixtures(dir: string): Promise<Stored[]> {
  const src = await generateInstances(`${dir}/src`, {
    instancesPerSeries: 4,
    size: 48,
    patientPrefix: "RENDER",
  });
  const url = (i: GeneratedInstance) =>
    `/studies/${i.studyUid}/series/${i.seriesUid}/instances/${i.sopInstanceUid}`;
  const made = async (i: number, name: string, cmd: string, args: string[], tolerance: number) => {
    const path = `${dir}/${i}.dcm`;
    await run(cmd, [...args, src[i].path, path]);
    return { name, path, reference: path, tolerance, url: url(src[i]) };
  };
  const jls = await made(3, "JPEG-LS", "dcmcjpls", ["+el"], 1);
  return [
    { name: "native", path: src[0].path, reference: src[0].path, tolerance: 1, url: url(src[0]) },
    await made(1, "JPEG lossless SV1", "dcmcjpeg", ["+e1"], 1),
    await made(2, "JPEG baseline", "dcmcjpeg", ["+eb", "+un"], 2),
    { ...jls, reference: src[3].path },
  ];
}

/** DCMTK's 8-bit PNG of `file` with the window `center`/`width` (or the file's first window). */
async function dcmtkPng(file: string, out: string, window?: [number, number]) {
  const voi = window ? ["+Ww", String(window[0]), String(window[1])] : ["+Wi", "1"];
  await run("dcmj2pnm", ["+on", ...voi, file, out]);
  return decodePng(await Deno.readFile(out));
}

async function png(res: Response) {
  const body = new Uint8Array(await res.arrayBuffer());
  assertEquals(res.status, 200, new TextDecoder().decode(body.slice(0, 300)));
  assertEquals(res.headers.get("content-type"), "image/png");
  return decodePng(body);
}

function maxDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  assertEquals(a.length, b.length);
  let max = 0;
  for (let i = 0; i < a.length; i++) max = Math.max(max, Math.abs(a[i] - b[i]));
  return max;
}

Deno.test({
  name: "WADO-RS rendered and thumbnail: passed to Orthanc, rendered by the bridge as DCMTK does",
  ignore: !HAS_PEERS,
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async (t) => {
    const dir = await tempDir("dicomweb-rendered-");
    const stored = await fixtures(dir);
    const orthanc = await startOrthanc({
      dicomweb: true,
      known: [{ aet: "GATEWAY_SCU", port: freePort() }],
    });
    let gw: TestGateway | undefined;
    try {
      for (const s of stored) await orthanc.upload(await Deno.readFile(s.path));
      gw = await startTestGateway(toml(orthanc));
      const g = gw;
      const [native] = stored;

      await t.step("dicomweb backend: Orthanc's own rendering passes through", async () => {
        for (const suffix of ["/rendered", "/rendered?viewport=24,24", "/thumbnail"]) {
          const direct = await fetch(`${orthanc.dicomweb}${native.url}${suffix}`, {
            headers: { accept: "image/jpeg" },
          });
          const via = await fetch(`${g.url}/web${native.url}${suffix}`, {
            headers: { accept: "image/jpeg" },
          });
          const [a, b] = [
            new Uint8Array(await direct.arrayBuffer()),
            new Uint8Array(await via.arrayBuffer()),
          ];
          assertEquals(via.status, direct.status, suffix);
          assertEquals(via.headers.get("content-type"), direct.headers.get("content-type"));
          assertEquals(b, a, suffix);
          if (suffix === "/rendered") assertEquals(via.status, 200);
        }
      });

      for (const s of stored) {
        await t.step(`bridge: ${s.name} rendered as DCMTK renders it`, async () => {
          for (const window of [undefined, [1000, 1500] as [number, number]]) {
            const query = window ? `?window=${window[0]},${window[1]}` : "";
            const ours = await png(
              await fetch(`${g.url}/bridge${s.url}/rendered${query}`, {
                headers: { accept: "image/png" },
              }),
            );
            const theirs = await dcmtkPng(s.reference, `${dir}/ref.png`, window);
            assertEquals([ours.width, ours.height, ours.channels], [48, 48, 1]);
            assertEquals([theirs.width, theirs.height], [48, 48]);
            const diff = maxDiff(ours.data, theirs.data);
            assert(diff <= s.tolerance, `${s.name} ${query}: differs from DCMTK by ${diff}`);
          }
        });
      }

      await t.step(
        "bridge: frames/1/rendered, JPEG output, viewport and thumbnail sizes",
        async () => {
          const frame = await fetch(`${g.url}/bridge${native.url}/frames/1/rendered`, {
            headers: { accept: "image/png" },
          });
          const whole = await fetch(`${g.url}/bridge${native.url}/rendered?accept=image/png`);
          assertEquals((await png(frame)).data, (await png(whole)).data);
          const jpg = await fetch(`${g.url}/bridge${native.url}/rendered?quality=80`);
          assertEquals(jpg.headers.get("content-type"), "image/jpeg");
          const decoded = jpeg.decode(new Uint8Array(await jpg.arrayBuffer()), { useTArray: true });
          assertEquals([decoded.width, decoded.height], [48, 48]);
          const small = await png(
            await fetch(`${g.url}/bridge${native.url}/rendered?viewport=24,12`, {
              headers: { accept: "image/png" },
            }),
          );
          assertEquals([small.width, small.height], [12, 12]);
          // A thumbnail shrinks to fit 200 x 200 but never enlarges a 48 x 48 image.
          const thumb = await png(
            await fetch(`${g.url}/bridge${native.url}/thumbnail`, {
              headers: { accept: "image/png" },
            }),
          );
          assertEquals([thumb.width, thumb.height], [48, 48]);
        },
      );

      await t.step("bridge: 406, 400, 404 and 501 with reasons", async () => {
        const code = async (res: Response) => {
          const body = await res.json() as { error: { code: string; message: string } };
          return [res.status, body.error.code];
        };
        const base = `${g.url}/bridge${native.url}`;
        assertEquals(
          await code(await fetch(`${base}/rendered`, { headers: { accept: "image/gif" } })),
          [406, "not_acceptable"],
        );
        assertEquals(
          await code(await fetch(`${base}/rendered?quality=500`)),
          [400, "invalid_dicom_request"],
        );
        assertEquals(await code(await fetch(`${base}/frames/2/rendered`)), [404, "not_found"]);
        assertEquals(
          await code(await fetch(`${base}/frames/1,2/rendered`)),
          [406, "not_acceptable"],
        );
        const study = native.url.split("/series/")[0];
        assertEquals(
          await code(await fetch(`${g.url}/bridge${study}/rendered`)),
          [501, "not_implemented"],
        );
      });
    } finally {
      await gw?.stop();
      await orthanc.stop();
      await removeDir(dir);
    }
  },
});

/**
 * A dicom_scp endpoint whose `storage_dir` is on a full disk (a 1 MiB tmpfs the test mounts and
 * fills): DCMTK storescu's C-STOREs are answered Out Of Resources (0xA700), one by one in the same
 * association, nothing half-written stays in storage_dir, the gateway keeps serving, and the same
 * instances are stored once the disk has room again.
 */
import { generateInstances } from "../fixtures/dicom/generate.ts";
import { parseP10 } from "../gateway/dicom/mod.ts";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { startTestGateway } from "./harness.ts";
import {
  type CommandResult,
  type Filler,
  fillFilesystem,
  freePort,
  isCi,
  mountSmallFilesystem,
  removeDir,
  requirePeer,
  runCommand,
  tempDir,
} from "./support/mod.ts";

const HAS_DCMTK = requirePeer("DCMTK", "storescu", "dcmtk");

function out(r: CommandResult): string {
  return `${r.stdout}\n${r.stderr}`;
}

/** Every file under `dir`, hidden ones included, relative to it. */
function filesUnder(dir: string, prefix = ""): string[] {
  const names: string[] = [];
  for (const e of Deno.readDirSync(dir)) {
    if (e.name.startsWith(".filler-")) continue;
    if (e.isDirectory) names.push(...filesUnder(`${dir}/${e.name}`, `${prefix}${e.name}/`));
    else names.push(`${prefix}${e.name}`);
  }
  return names.sort();
}

Deno.test({
  name:
    "dicom_scp: a full storage_dir answers C-STORE Out Of Resources; association and gateway live",
  // Mounting needs root (CI runs as root); elsewhere the test is skipped, in CI it must run.
  ignore: !HAS_DCMTK || (Deno.uid() !== 0 && !isCi()),
  sanitizeResources: false,
  sanitizeOps: false,
  fn: async () => {
    const small = await mountSmallFilesystem(1024);
    if ("reason" in small) throw new Error(small.reason);
    const dir = await tempDir("dicom-disk-full-");
    // Two instances larger than a receive slice (written while they arrive) and a small one.
    const big = await generateInstances(`${dir}/big`, { instancesPerSeries: 2, size: 256 });
    const [little] = await generateInstances(`${dir}/little`, { patientPrefix: "LITTLE" });
    const files = [...big, little];
    const port = freePort();
    const storageDir = `${small.dir}/received`;
    const gw = await startTestGateway(`
[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GWSCP"
bind_addr = "127.0.0.1"
port = ${port}
enable_store = true
storage_dir = "${storageDir}"
allowed_calling_aets = ["STORESCU", "ECHOSCU"]

[backends.echo]
service = "echo"

[pipelines.scp]
endpoints = ["scp"]
backends = ["echo"]

[endpoints.web]
service = "http"
[endpoints.web.options]
path_prefix = "/echo"
[pipelines.web]
endpoints = ["web"]
backends = ["echo"]
`);
    const host = ["127.0.0.1", String(port)];
    const storescu = () =>
      runCommand("storescu", [
        "-v",
        // Go on after a refused instance: each gets its own answer in the same association.
        "-nh",
        "-aet",
        "STORESCU",
        "-aec",
        "GWSCP",
        ...host,
        ...files.map((f) => f.path),
      ], {
        timeoutMs: 30_000,
      });
    let filler: Filler | undefined;
    try {
      await Deno.mkdir(storageDir);
      filler = await fillFilesystem(small.dir);
      const refused = await storescu();
      const answers = [...out(refused).matchAll(/Received Store Response \(([^)]*)\)/g)].map((m) =>
        m[1]
      );
      assertEquals(answers, files.map(() => "Refused: OutOfResources"), out(refused));
      // One association for all three, released normally (not aborted by the gateway).
      assertMatch(out(refused), /Releasing Association/);
      assert(!/Association Aborted/i.test(out(refused)), out(refused));
      assertEquals(filesUnder(storageDir), [], "nothing half-written in storage_dir");
      const failures = gw.logs.map((l) => JSON.parse(l)).filter((l) =>
        l.msg === "dimse" && l.operation === "C-STORE"
      );
      assertEquals(failures.map((l) => l.status), files.map(() => "0xa700"));
      // The gateway serves on: DIMSE and HTTP.
      const echo = await runCommand("echoscu", ["-aet", "ECHOSCU", "-aec", "GWSCP", ...host]);
      assertEquals(echo.code, 0, out(echo));
      const http = await fetch(`${gw.url}/echo/ping`);
      assertEquals(http.status, 200);
      await http.body?.cancel();

      await filler.free();
      filler = undefined;
      const stored = await storescu();
      assertEquals(stored.code, 0, out(stored));
      const kept = filesUnder(storageDir);
      assertEquals(kept, files.map((f) => `${f.studyUid}/${f.sopInstanceUid}.dcm`).sort());
      for (const f of files) {
        const file = await Deno.readFile(`${storageDir}/${f.studyUid}/${f.sopInstanceUid}.dcm`);
        assertEquals(parseP10(file).meta.sopInstanceUid, f.sopInstanceUid);
      }
    } finally {
      await filler?.free();
      await gw.stop();
      await small.unmount();
      await removeDir(dir);
    }
  },
});

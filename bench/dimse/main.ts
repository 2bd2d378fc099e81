/**
 * DIMSE benchmark (`deno run -A bench/dimse/main.ts [instances]`): generates CT-like instances
 * (512x512, 16-bit; 1,000 by default), sends them with DCMTK `storescu` (one association) into
 * DCMTK `storescp` and into the gateway's dicom_scp listener (storing to disk, echo pipeline), in
 * one run, and prints instances/s, MB/s and the ratio gateway/storescp (target >= 0.5). Then
 * measures C-FIND round trips (p50/p99) on a held association: directly to DCMTK `dcmqrscp`, and
 * through the gateway (dicom_scp -> pipeline -> dicom_scu -> the same dcmqrscp).
 */
import { generateInstances } from "../../fixtures/dicom/generate.ts";
import { startDcmqrscp, startStorescp } from "../../fixtures/dicom/peers.ts";
import { freePort, removeDir, startGateway, tempDir } from "../../tests/support/mod.ts";
import { fixed, markdownTable, verdict } from "../http_proxy/report.ts";
import { findRoundTrips, quantile, storescu } from "./measure.ts";

/** Target of the store comparison: gateway instances/s over storescp's. */
export const STORE_TARGET = 0.5;

/** The benchmark gateway: a storing SCP (echo pipeline) or a C-FIND proxy to `qrPort`. */
function gatewayToml(scpPort: number, storeDir: string, qrPort?: number): string {
  const head = `
[network.main]
bind = "127.0.0.1"
port = ${freePort()}

[management]
bind = "127.0.0.1"
port = ${freePort()}

[logging]
level = "warn"

[endpoints.scp]
service = "dicom_scp"
[endpoints.scp.options]
local_aet = "GWBENCH"
bind_addr = "127.0.0.1"
port = ${scpPort}
enable_store = true
enable_find = true
storage_dir = "${storeDir}"

[pipelines.bench]
endpoints = ["scp"]
`;
  if (qrPort === undefined) {
    return head + `backends = ["echo"]\n\n[backends.echo]\nservice = "echo"\n`;
  }
  return head + `backends = ["pacs"]

[backends.pacs]
service = "dicom_scu"
[backends.pacs.options]
aet = "QRSCP"
host = "127.0.0.1"
port = ${qrPort}
`;
}

async function main(): Promise<void> {
  const count = Number(Deno.args[0] ?? 1000);
  const finds = Number(Deno.args[1] ?? 300);
  const work = await tempDir("bench-dimse-");
  try {
    console.log(`generating ${count} CT-like instances (512x512, 16-bit) ...`);
    const files = await generateInstances(`${work}/in`, {
      studies: 1,
      seriesPerStudy: Math.ceil(count / 250),
      instancesPerSeries: Math.min(count, 250),
      size: 512,
    });
    const sent = files.slice(0, count);
    for (const f of files.slice(count)) await Deno.remove(f.path);
    const bytes = sent.reduce((n, f) => n + f.size, 0);

    const dcmtk = await startStorescp({ aet: "STORESCP" });
    const scp = freePort();
    const gw = await startGateway({ configText: gatewayToml(scp, `${work}/gw`) }).catch(
      async (err) => {
        await dcmtk.stop();
        throw err;
      },
    );
    let storeRows: string[][];
    let ratio: number;
    try {
      const base = await storescu(`${work}/in`, count, bytes, "STORESCP", dcmtk.port);
      const ours = await storescu(`${work}/in`, count, bytes, "GWBENCH", scp);
      ratio = ours.instancesPerSec / base.instancesPerSec;
      storeRows = [
        [
          "DCMTK storescp",
          fixed(base.seconds),
          fixed(base.instancesPerSec, 0),
          fixed(base.mbPerSec, 1),
          "1.00",
        ],
        [
          "gateway dicom_scp",
          fixed(ours.seconds),
          fixed(ours.instancesPerSec, 0),
          fixed(ours.mbPerSec, 1),
          fixed(ratio),
        ],
      ];
    } finally {
      await gw.stop();
      await dcmtk.stop();
    }
    console.log(
      `\nC-STORE of ${count} instances (${fixed(bytes / 1e6, 0)} MB), one storescu association:\n`,
    );
    console.log(markdownTable(["receiver", "seconds", "instances/s", "MB/s", "ratio"], storeRows));
    console.log(
      `\nratio ${fixed(ratio)} (target >= ${STORE_TARGET}): ${verdict(ratio, ">=", STORE_TARGET)}`,
    );

    // C-FIND: a small archive, queried directly and through the gateway.
    const small = await generateInstances(`${work}/qr`, { studies: 5, instancesPerSeries: 2 });
    const qr = await startDcmqrscp(small.map((f) => f.path));
    const findPort = freePort();
    const gw2 = await startGateway({ configText: gatewayToml(findPort, `${work}/gw2`, qr.port) });
    try {
      const direct = await findRoundTrips(qr.port, "QRSCP", small[0].studyUid, finds);
      const via = await findRoundTrips(findPort, "GWBENCH", small[0].studyUid, finds);
      console.log(`\nC-FIND round trip (${finds} queries on one association, 1 match each), ms:\n`);
      console.log(markdownTable(["path", "p50", "p99"], [
        ["direct to dcmqrscp", fixed(quantile(direct, 0.5)), fixed(quantile(direct, 0.99))],
        ["gateway -> dcmqrscp", fixed(quantile(via, 0.5)), fixed(quantile(via, 0.99))],
      ]));
    } finally {
      await gw2.stop();
      await qr.stop();
    }
  } finally {
    await removeDir(work);
  }
}

if (import.meta.main) await main();

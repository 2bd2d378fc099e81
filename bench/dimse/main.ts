/**
 * DIMSE benchmark (`deno run -A bench/dimse/main.ts --help`): generates CT-like instances
 * (512x512, 16-bit; 1,000 by default), sends them with DCMTK `storescu` (one association) into
 * DCMTK `storescp` and into the gateway's dicom_scp listener (storing to disk, echo pipeline,
 * production environment), in several rounds with fresh receivers and alternating order, and prints
 * instances/s, MB/s, receiver CPU per instance and the ratio gateway/storescp (target >= 0.5, judged
 * on the median round). Then measures C-FIND round trips (p50/p99) on a held association: directly
 * to DCMTK `dcmqrscp`, and through the gateway (dicom_scp -> pipeline -> dicom_scu -> dcmqrscp).
 */
import { generateInstances } from "../../fixtures/dicom/generate.ts";
import { type DicomPeer, startDcmqrscp, startStorescp } from "../../fixtures/dicom/peers.ts";
import {
  freePort,
  type GatewayProcess,
  removeDir,
  startGateway,
  tempDir,
} from "../../tests/support/mod.ts";
import { fixed, markdownTable, verdict } from "../http_proxy/report.ts";
import { parseArgs, USAGE } from "./args.ts";
import { findRoundTrips, median, quantile, type StoreRun, storescu } from "./measure.ts";

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

/** One receiver started for one storescu run, stopped afterwards. */
type Receiver = () => Promise<{ aet: string; port: number; pid: number; stop(): Promise<void> }>;

function storescpReceiver(work: string, round: number): Receiver {
  return async () => {
    // Into a folder of the work directory (the last -od wins), removed with it at the end.
    const dir = `${work}/storescp${round}`;
    await Deno.mkdir(dir);
    const peer: DicomPeer = await startStorescp({ aet: "STORESCP", args: ["-od", dir] });
    return { aet: peer.aet, port: peer.port, pid: peer.process.child.pid, stop: peer.stop };
  };
}

function gatewayReceiver(work: string, round: number, env: Record<string, string>): Receiver {
  return async () => {
    const port = freePort();
    const gw: GatewayProcess = await startGateway({
      configText: gatewayToml(port, `${work}/gw${round}`),
      env,
    });
    return { aet: "GWBENCH", port, pid: gw.pid, stop: async () => void await gw.stop() };
  };
}

/** Instances sent to each fresh receiver before the timed run (the gateway's JIT warms up). */
const WARMUP = 50;

async function timed(
  receiver: Receiver,
  work: string,
  count: number,
  bytes: number,
): Promise<StoreRun> {
  const r = await receiver();
  try {
    await storescu(`${work}/warmup`, WARMUP, 0, r);
    return await storescu(`${work}/in`, count, bytes, r);
  } finally {
    await r.stop();
  }
}

function row(name: string, round: number, run: StoreRun, ratio: string): string[] {
  return [
    name,
    `${round}`,
    fixed(run.seconds),
    fixed(run.instancesPerSec, 0),
    fixed(run.mbPerSec, 1),
    run.cpuMsPerInstance === undefined ? "n/a" : fixed(run.cpuMsPerInstance),
    ratio,
  ];
}

async function storeRounds(
  work: string,
  count: number,
  rounds: number,
  gatewayEnv: Record<string, string>,
): Promise<void> {
  console.log(`generating ${count} CT-like instances (512x512, 16-bit) ...`);
  const files = await generateInstances(`${work}/in`, {
    studies: 1,
    seriesPerStudy: Math.ceil(count / 250),
    instancesPerSeries: Math.min(count, 250),
    size: 512,
  });
  const sent = files.slice(0, count);
  for (const f of files.slice(count)) await Deno.remove(f.path);
  await generateInstances(`${work}/warmup`, { instancesPerSeries: WARMUP, size: 512 });
  const bytes = sent.reduce((n, f) => n + f.size, 0);
  const rows: string[][] = [];
  const ratios: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const storescpFirst = round % 2 === 1;
    let base: StoreRun;
    let ours: StoreRun;
    if (storescpFirst) {
      base = await timed(storescpReceiver(work, round), work, count, bytes);
      ours = await timed(gatewayReceiver(work, round, gatewayEnv), work, count, bytes);
    } else {
      ours = await timed(gatewayReceiver(work, round, gatewayEnv), work, count, bytes);
      base = await timed(storescpReceiver(work, round), work, count, bytes);
    }
    const ratio = ours.instancesPerSec / base.instancesPerSec;
    ratios.push(ratio);
    rows.push(row("DCMTK storescp", round, base, "1.00"));
    rows.push(row("gateway dicom_scp", round, ours, fixed(ratio)));
  }
  const extra = Object.entries(gatewayEnv).map(([k, v]) => `${k}=${v}`).join(" ");
  console.log(
    `\nC-STORE of ${count} instances (${fixed(bytes / 1e6, 0)} MB), one storescu association, ` +
      `${rounds} round(s)${extra ? `, gateway environment + ${extra}` : ""}:\n`,
  );
  console.log(
    markdownTable(
      ["receiver", "round", "seconds", "instances/s", "MB/s", "CPU ms/instance", "ratio"],
      rows,
    ),
  );
  const mid = median(ratios);
  console.log(
    `\nratio median ${fixed(mid)} (rounds: ${ratios.map((r) => fixed(r)).join(", ")}; ` +
      `target >= ${STORE_TARGET}): ${verdict(mid, ">=", STORE_TARGET)}`,
  );
}

async function findLatency(work: string, finds: number): Promise<void> {
  const small = await generateInstances(`${work}/qr`, { studies: 5, instancesPerSeries: 2 });
  const qr = await startDcmqrscp(small.map((f) => f.path));
  const findPort = freePort();
  const gw = await startGateway({ configText: gatewayToml(findPort, `${work}/gwq`, qr.port) });
  try {
    const direct = await findRoundTrips(qr.port, "QRSCP", small[0].studyUid, finds);
    const via = await findRoundTrips(findPort, "GWBENCH", small[0].studyUid, finds);
    console.log(`\nC-FIND round trip (${finds} queries on one association, 1 match each), ms:\n`);
    console.log(markdownTable(["path", "p50", "p99"], [
      ["direct to dcmqrscp", fixed(quantile(direct, 0.5)), fixed(quantile(direct, 0.99))],
      ["gateway -> dcmqrscp", fixed(quantile(via, 0.5)), fixed(quantile(via, 0.99))],
    ]));
  } finally {
    await gw.stop();
    await qr.stop();
  }
}

async function main(): Promise<void> {
  const args = parseArgs(Deno.args);
  if (args.help) {
    console.log(USAGE);
    return;
  }
  const work = await tempDir("bench-dimse-");
  try {
    await storeRounds(work, args.instances, args.rounds, args.gatewayEnv);
    if (args.finds > 0) await findLatency(work, args.finds);
  } finally {
    await removeDir(work);
  }
}

if (import.meta.main) await main();

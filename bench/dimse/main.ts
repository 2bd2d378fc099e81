/**
 * DIMSE receive benchmark (`deno run -A bench/dimse/main.ts --help`): generates CT-like instances
 * (512x512, 16-bit; 1,000 by default) and sends them with DCMTK `storescu` into three receivers, in
 * several rounds with fresh receivers and rotating order:
 * - DCMTK `storescp` (the reference);
 * - the gateway's dicom_scp listener (production environment) with `storage_dir`: files written
 *   while they arrive and renamed into place, no fsync, as storescp writes them; its pipeline is
 *   one `echo` backend, whose answer to a C-STORE goes unread and so is never built (no hash, no
 *   DICOM JSON of the header): what remains is the gateway's own routing of each instance;
 * - a minimal Deno storage SCP (bench/dimse/bare_scp.ts: the gateway's DIMSE adapter writing each
 *   instance straight to its file, nothing else), the runtime's floor.
 * It prints instances/s, MB/s, receiver CPU per instance and each ratio to storescp (target for the
 * gateway >= 1.0, judged on the median round), and the machine's load average around each table. Then the same files split over 4 `storescu`
 * processes at once (4 associations) into `storescp --fork`, the gateway and the minimal SCP. Last,
 * C-FIND round trips (p50/p99) on a held association: directly to DCMTK `dcmqrscp`, and through the
 * gateway (dicom_scp -> pipeline -> dicom_scu -> dcmqrscp).
 */
import { generateInstances } from "../../fixtures/dicom/generate.ts";
import { type DicomPeer, startDcmqrscp, startStorescp } from "../../fixtures/dicom/peers.ts";
import {
  canConnect,
  freePort,
  type GatewayProcess,
  removeDir,
  runCommand,
  spawnCaptured,
  startGateway,
  tempDir,
  waitReady,
} from "../../tests/support/mod.ts";
import { fixed, markdownTable, verdict } from "../http_proxy/report.ts";
import { parseArgs, USAGE } from "./args.ts";
import {
  findRoundTrips,
  median,
  quantile,
  type StoreRun,
  storescu,
  storescuParallel,
} from "./measure.ts";

/** Target of the store comparison: gateway instances/s over storescp's. */
export const STORE_TARGET = 1.0;

/** storescu processes (associations) at once in the parallel run. */
export const PARALLEL = 4;

/**
 * The benchmark gateway: a storing SCP (`storage_dir`, echo pipeline) or a C-FIND proxy to
 * `qrPort`.
 */
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

function storescpReceiver(work: string, round: string, fork = false): Receiver {
  return async () => {
    // Into a folder of the work directory (the last -od wins), removed with it at the end.
    const dir = `${work}/storescp${round}`;
    await Deno.mkdir(dir);
    const args = ["-od", dir, ...(fork ? ["--fork"] : [])];
    const peer: DicomPeer = await startStorescp({ aet: "STORESCP", args });
    return { aet: peer.aet, port: peer.port, pid: peer.process.child.pid, stop: peer.stop };
  };
}

/** The minimal Deno storage SCP (bare_scp.ts) as its own process, like the gateway. */
function bareReceiver(work: string, round: string): Receiver {
  return async () => {
    const port = freePort();
    const dir = `${work}/bare${round}`;
    const process = spawnCaptured(Deno.execPath(), [
      "run",
      "--allow-all",
      new URL("./bare_scp.ts", import.meta.url).pathname,
      String(port),
      dir,
      "BARESCP",
    ], { env: { NO_COLOR: "1" } });
    await waitReady(process, {
      name: "bare_scp",
      check: () => canConnect(port),
      description: `bare_scp listening on ${port}`,
      timeoutMs: 30_000,
    });
    return {
      aet: "BARESCP",
      port,
      pid: process.child.pid,
      stop: async () => void await process.stop(),
    };
  };
}

function gatewayReceiver(
  work: string,
  round: string,
  env: Record<string, string>,
  profile?: string,
): Receiver {
  return async () => {
    const port = freePort();
    const gw: GatewayProcess = await startGateway({
      configText: gatewayToml(port, `${work}/gw${round}`),
      env,
      denoFlags: profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : [],
    });
    return { aet: "GWBENCH", port, pid: gw.pid, stop: async () => void await gw.stop() };
  };
}

/** Instances sent to each fresh receiver before the timed run (the gateway's JIT warms up). */
const WARMUP = 50;

/**
 * Writes the page cache back to disk (not timed). Every run leaves about 525 MB of dirty pages;
 * past the kernel's background threshold (10 % of memory) their writeback runs during the next
 * runs and writers are throttled, so without this the receiver that runs after a few others is
 * slowed by their data (its wall time, not its CPU time).
 */
async function writeBack(): Promise<void> {
  const r = await runCommand("sync", [], { timeoutMs: 300_000 });
  if (r.code !== 0) throw new Error(`sync failed: ${r.stderr}`);
}

/** One storescu run (or, with `split`, one per folder at once) into a fresh receiver. */
async function timed(
  receiver: Receiver,
  work: string,
  count: number,
  bytes: number,
  split?: string[],
): Promise<StoreRun> {
  const r = await receiver();
  try {
    await storescu(`${work}/warmup`, WARMUP, 0, r);
    await writeBack();
    return split
      ? await storescuParallel(split, count, bytes, r)
      : await storescu(`${work}/in`, count, bytes, r);
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

/** The receivers of a round, in the order they run (rotated per round). */
type Named = { name: string; receiver: Receiver };

/**
 * Rounds of one measurement: each receiver fresh per round, the order rotated so none always goes
 * first; rows and the median ratio of each receiver to the first (the DCMTK reference).
 */
async function rounds(
  title: string,
  make: (round: number) => Named[],
  run: (r: Receiver) => Promise<StoreRun>,
  count: number,
  bytes: number,
  n: number,
): Promise<{ ratio: Map<string, number[]>; rows: string[][] }> {
  const rows: string[][] = [];
  const ratio = new Map<string, number[]>();
  const loadBefore = await loadAverage();
  for (let round = 1; round <= n; round++) {
    const receivers = make(round);
    const order = receivers.map((_, i) => receivers[(i + round - 1) % receivers.length]);
    const runs = new Map<string, StoreRun>();
    for (const { name, receiver } of order) runs.set(name, await run(receiver));
    const base = runs.get(receivers[0].name)!;
    for (const { name } of receivers) {
      const r = runs.get(name)!;
      const x = r.instancesPerSec / base.instancesPerSec;
      if (name !== receivers[0].name) ratio.set(name, [...(ratio.get(name) ?? []), x]);
      rows.push(row(name, round, r, fixed(x)));
    }
  }
  const load = `load average ${loadBefore} before, ${await loadAverage()} after`;
  console.log(
    `\n${title} (${count} instances, ${fixed(bytes / 1e6, 0)} MB, ${n} round(s); ${load}):\n`,
  );
  console.log(
    markdownTable(
      ["receiver", "round", "seconds", "instances/s", "MB/s", "CPU ms/instance", "ratio"],
      rows,
    ),
  );
  return { ratio, rows };
}

/** The 1-minute load average (other work on the machine), "n/a" off Linux. */
async function loadAverage(): Promise<string> {
  const text = await Deno.readTextFile("/proc/loadavg").catch(() => "n/a");
  return text.split(" ")[0];
}

function medianLine(name: string, ratios: number[], target?: number): string {
  const mid = median(ratios);
  const rounds = ratios.map((r) => fixed(r)).join(", ");
  const judged = target === undefined ? "" : `; target >= ${target}: ${verdict(mid, ">=", target)}`;
  return `${name}: ratio median ${fixed(mid)} (rounds: ${rounds}${judged})`;
}

async function storeRounds(
  work: string,
  count: number,
  n: number,
  gatewayEnv: Record<string, string>,
  profile?: string,
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
  // The same files in PARALLEL folders (hard links), one per storescu of the parallel run.
  const split = Array.from({ length: PARALLEL }, (_, i) => `${work}/split${i}`);
  for (const d of split) await Deno.mkdir(d);
  for (const [i, f] of sent.entries()) {
    await Deno.link(f.path, `${split[i % PARALLEL]}/${i}.dcm`);
  }
  const extra = Object.entries(gatewayEnv).map(([k, v]) => `${k}=${v}`).join(" ");
  const single = await rounds(
    "C-STORE, one storescu association" + (extra ? `, gateway environment + ${extra}` : ""),
    (round) => [
      { name: "DCMTK storescp", receiver: storescpReceiver(work, `${round}`) },
      {
        name: "gateway dicom_scp",
        receiver: gatewayReceiver(work, `${round}`, gatewayEnv, profile),
      },
      { name: "Deno minimal SCP", receiver: bareReceiver(work, `${round}`) },
    ],
    (r) => timed(r, work, count, bytes),
    count,
    bytes,
    n,
  );
  const parallel = await rounds(
    `C-STORE, ${PARALLEL} storescu processes at once (${PARALLEL} associations)`,
    (round) => [
      { name: "DCMTK storescp --fork", receiver: storescpReceiver(work, `p${round}`, true) },
      {
        name: "gateway dicom_scp",
        receiver: gatewayReceiver(work, `p${round}`, gatewayEnv, profile),
      },
      { name: "Deno minimal SCP", receiver: bareReceiver(work, `p${round}`) },
    ],
    (r) => timed(r, work, count, bytes, split),
    count,
    bytes,
    n,
  );
  console.log(
    "\nCPU of storescp --fork counts its association processes once it has reaped them.\n",
  );
  console.log(
    medianLine(
      "one association, gateway / storescp",
      single.ratio.get("gateway dicom_scp")!,
      STORE_TARGET,
    ),
  );
  console.log(
    medianLine(
      "one association, minimal Deno SCP / storescp",
      single.ratio.get("Deno minimal SCP")!,
    ),
  );
  console.log(
    medianLine(
      `${PARALLEL} associations, gateway / storescp --fork`,
      parallel.ratio.get("gateway dicom_scp")!,
    ),
  );
  console.log(
    medianLine(
      `${PARALLEL} associations, minimal Deno SCP / storescp --fork`,
      parallel.ratio.get("Deno minimal SCP")!,
    ),
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
    await storeRounds(work, args.instances, args.rounds, args.gatewayEnv, args.profile);
    if (args.finds > 0) await findLatency(work, args.finds);
  } finally {
    await removeDir(work);
  }
}

if (import.meta.main) await main();

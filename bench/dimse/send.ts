/**
 * DIMSE send benchmark (`deno run -A bench/dimse/send.ts --help`): the gateway as a C-STORE
 * sender and a query proxy, against DCMTK doing the same directly, in one run on this machine.
 *
 * - Send: 1,000 CT-like instances (512x512, 16-bit) wait in the delivery queue of a `dicom_scu`
 *   backend (filled through the gateway's dicom_scp while the PACS was down); a fresh gateway
 *   delivers them to DCMTK `storescp` over its association pool. Against: `storescu` sending the
 *   same files to a fresh `storescp`. Both are timed the same way, between the arrival of the
 *   first and of the last timed instance in storescp's directory (inotify), after 50 warm-up
 *   instances over the same association. Target: gateway instances/s >= 0.9 x storescu's. Beside
 *   them the least a Deno sender does (bare_sender.ts: the DIMSE adapter alone, a process with
 *   the gateway's flags and environment): the floor. Each sender's CPU time per timed instance is
 *   read from /proc while it sends: what a send costs, whatever the machine's load. After the
 *   rounds, the delivery queue alone in this process (send_measure.ts, queueShare): its CPU per
 *   instance to accept one (written, fsync, renamed) and to deliver one to a backend that answers
 *   at once (read back, checked, removed): the queue's share of the gateway's figure.
 * - Forward (for information): `storescu` into the gateway's dicom_scp, each instance forwarded
 *   synchronously by `dicom_scu` to `storescp` before the C-STORE is answered, against `storescu`
 *   straight to `storescp`: two hops in series against one, and the receive side of the gateway
 *   (bench/dimse/main.ts) in the path.
 * - C-ECHO and C-FIND round trips (p50, p99) on a held association: directly to DCMTK `dcmqrscp`,
 *   through the gateway (dicom_scp -> pipeline -> dicom_scu pool -> dcmqrscp), and through the
 *   least a Deno process in the middle does (relay.ts: bytes copied, nothing parsed). Target: p50
 *   through the gateway within 2x the direct one.
 */
import { generateInstances } from "../../fixtures/dicom/generate.ts";
import { DCMTK_ENV, startDcmqrscp, startStorescp } from "../../fixtures/dicom/peers.ts";
import {
  freePort,
  GATEWAY_ENV,
  type GatewayProcess,
  removeDir,
  runCommand,
  startGateway,
  tempDir,
} from "../../tests/support/mod.ts";
import { fixed, markdownTable, verdict } from "../http_proxy/report.ts";
import { cpuSeconds, findRoundTrips, median, quantile } from "./measure.ts";
import { Arrivals, echoRoundTrips, queueShare } from "./send_measure.ts";

/** Target of the send comparison: gateway instances/s over storescu's. */
export const SEND_TARGET = 0.9;
/** Target of the round trips: gateway p50 over the direct p50, at most. */
export const ROUND_TRIP_TARGET = 2;
/** Instances sent before the timed ones, over the same association. */
const WARMUP = 50;
const STORESCP_AET = "STORESCP";

const USAGE = `DIMSE send benchmark: the gateway's dicom_scu delivering queued instances to
DCMTK storescp against storescu sending them directly; storescu forwarded through the gateway
(information); C-ECHO and C-FIND round trips through the gateway against dcmqrscp directly.

usage: deno run -A bench/dimse/send.ts [instances] [round trips] [--rounds N] [--no-forward]
       [--only-round-trips] [--only-find] [--profile DIR]

  instances     CT-like 512x512 16-bit instances per run (default 1000)
  round trips   C-ECHO and C-FIND round trips per path, 0 to skip (default 300)
  --rounds N    rounds, alternating which sender goes first (default 3); verdicts use the
                median of the rounds
  --no-forward  skip the synchronous forwarding scenario
  --only-round-trips  run only the C-ECHO and C-FIND round trips (no C-STORE send, no forwarding)
  --only-find   with --only-round-trips: the C-FIND round trips alone (a profile of one operation)
  --profile DIR the delivering gateway (and the round trips' gateway) runs with deno's --cpu-prof
                and leaves its V8 CPU profile in DIR`;

interface Args {
  instances: number;
  trips: number;
  rounds: number;
  forward: boolean;
  onlyRoundTrips: boolean;
  onlyFind: boolean;
  profile?: string;
}

function parseArgs(argv: string[]): Args | undefined {
  const out: Args = {
    instances: 1000,
    trips: 300,
    rounds: 3,
    forward: true,
    onlyRoundTrips: false,
    onlyFind: false,
  };
  const positional: number[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--help" || a === "-h") return undefined;
    if (a === "--no-forward") out.forward = false;
    else if (a === "--only-round-trips") out.onlyRoundTrips = true;
    else if (a === "--only-find") out.onlyFind = true;
    else if (a === "--profile") out.profile = argv[++i];
    else if (a === "--rounds") out.rounds = integer(argv[++i], "--rounds", 1);
    else if (a.startsWith("--rounds=")) out.rounds = integer(a.slice(9), "--rounds", 1);
    else if (/^\d+$/.test(a)) positional.push(Number(a));
    else throw new Error(`unknown argument ${a}\n\n${USAGE}`);
  }
  if (positional.length > 2) throw new Error(`too many arguments\n\n${USAGE}`);
  if (positional[0] !== undefined) out.instances = integer(String(positional[0]), "instances", 1);
  if (positional[1] !== undefined) out.trips = integer(String(positional[1]), "round trips", 0);
  return out;
}

function integer(text: string | undefined, name: string, min: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}`);
  return n;
}

/**
 * Gateway: dicom_scp `scpPort` -> pipeline -> dicom_scu to `pacsPort`, queued in `queue.dir`
 * when given: `filling` (the PACS is down: the first attempt fails and the queue, fifo, waits an
 * hour) or delivering (a failed attempt is retried at once: the queue may try before the
 * configuration is attached at start).
 */
function gatewayToml(
  scpPort: number,
  pacsPort: number,
  pacsAet: string,
  queue?: { dir: string; filling: boolean },
) {
  const backoff = queue?.filling ? 3_600_000 : 1;
  const queueTable = queue === undefined ? "" : `
[backends.pacs.queue]
dir = "${queue.dir}"
initial_backoff_ms = ${backoff}
max_backoff_ms = ${backoff}
`;
  return `
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

[backends.pacs]
service = "dicom_scu"
timeout_secs = 60
[backends.pacs.options]
aet = "${pacsAet}"
host = "127.0.0.1"
port = ${pacsPort}
${queueTable}
[pipelines.bench]
endpoints = ["scp"]
backends = ["pacs"]
`;
}

/** `storescu` sends every file of `dir` on one association to `aet` at `port`. */
async function storescu(dir: string, aet: string, port: number): Promise<void> {
  const r = await runCommand("storescu", ["-aec", aet, "+sd", "127.0.0.1", String(port), dir], {
    timeoutMs: 600_000,
    env: DCMTK_ENV,
  });
  if (r.code !== 0) throw new Error(`storescu to ${aet} failed: ${r.stderr.slice(-2000)}`);
}

/** A fresh storescp writing into `dir`, its arrivals watched. */
async function receiver(dir: string) {
  await Deno.mkdir(dir);
  const peer = await startStorescp({ aet: STORESCP_AET, args: ["-od", dir] });
  const arrivals = new Arrivals(dir);
  return {
    peer,
    arrivals,
    stop: async () => {
      await arrivals.stop();
      await peer.stop();
    },
  };
}

/** The sender's CPU time per timed instance (ms) of each run, when readable (by run name). */
const SENDER_CPU = new Map<string, number>();

/**
 * Notes in SENDER_CPU the CPU time (user + system) process `pid` spent between the arrival of the
 * first and of the last timed instance, per instance: what sending costs, whatever the load.
 */
async function senderCpu(
  run: string,
  pid: number,
  arrivals: Arrivals,
  count: number,
  timeoutMs: number,
): Promise<void> {
  await arrivals.until(WARMUP + 1, timeoutMs);
  const before = await cpuSeconds(pid);
  await arrivals.until(WARMUP + count, timeoutMs);
  const after = await cpuSeconds(pid);
  if (before !== undefined && after !== undefined) {
    SENDER_CPU.set(run, (after - before) * 1000 / (count - 1));
  }
}

/** Seconds `count` timed instances took, storescu straight to storescp. */
async function direct(work: string, run: string, count: number): Promise<number> {
  const r = await receiver(`${work}/${run}`);
  try {
    await storescu(`${work}/warmup`, STORESCP_AET, r.peer.port);
    // The timed storescu is a child of ours: its CPU time is read while it sends.
    const child = new Deno.Command("storescu", {
      args: ["-aec", STORESCP_AET, "+sd", "127.0.0.1", String(r.peer.port), `${work}/in`],
      env: DCMTK_ENV,
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const [status] = await Promise.all([
      child.output(),
      senderCpu(run, child.pid, r.arrivals, count, 60_000),
    ]);
    if (status.code !== 0) {
      throw new Error(`storescu failed: ${new TextDecoder().decode(status.stderr).slice(-2000)}`);
    }
    await r.arrivals.until(WARMUP + count, 60_000);
    return r.arrivals.span(WARMUP + 1, WARMUP + count) * count / (count - 1);
  } finally {
    await r.stop();
  }
}

/**
 * Seconds `count` timed instances took, delivered from the gateway's queue: filled while the
 * PACS is down (a closed port), then a fresh gateway delivers to a fresh storescp.
 */
async function queued(
  work: string,
  run: string,
  count: number,
  profile?: string,
): Promise<number> {
  const queueDir = `${work}/${run}-queue`;
  const scpPort = freePort();
  const filling = await startGateway({
    configText: gatewayToml(scpPort, freePort(), STORESCP_AET, { dir: queueDir, filling: true }),
  });
  try {
    await storescu(`${work}/warmup`, "GWBENCH", scpPort);
    await storescu(`${work}/in`, "GWBENCH", scpPort);
  } finally {
    await filling.stop();
  }
  const r = await receiver(`${work}/${run}`);
  let gw: GatewayProcess | undefined;
  try {
    gw = await startGateway({
      configText: gatewayToml(freePort(), r.peer.port, STORESCP_AET, {
        dir: queueDir,
        filling: false,
      }),
      denoFlags: profile ? ["--cpu-prof", `--cpu-prof-dir=${profile}`] : [],
    });
    await senderCpu(run, gw.pid, r.arrivals, count, 600_000);
    await r.arrivals.until(WARMUP + count, 600_000);
    return r.arrivals.span(WARMUP + 1, WARMUP + count) * count / (count - 1);
  } finally {
    await gw?.stop();
    await r.stop();
    await removeDir(queueDir);
  }
}

/** Seconds `count` timed instances took, storescu -> gateway -> storescp (synchronous). */
async function forwarded(work: string, run: string, count: number): Promise<number> {
  const r = await receiver(`${work}/${run}`);
  const scpPort = freePort();
  let gw: GatewayProcess | undefined;
  try {
    gw = await startGateway({ configText: gatewayToml(scpPort, r.peer.port, STORESCP_AET) });
    await storescu(`${work}/warmup`, "GWBENCH", scpPort);
    await storescu(`${work}/in`, "GWBENCH", scpPort);
    await r.arrivals.until(WARMUP + count, 60_000);
    return r.arrivals.span(WARMUP + 1, WARMUP + count) * count / (count - 1);
  } finally {
    await gw?.stop();
    await r.stop();
  }
}

function row(
  path: string,
  round: number,
  seconds: number,
  count: number,
  mb: number,
  ratio: string,
  cpuMs: number | undefined,
) {
  return [
    path,
    `${round}`,
    fixed(seconds),
    fixed(count / seconds, 0),
    fixed(mb / seconds, 1),
    ratio,
    cpuMs === undefined ? "" : fixed(cpuMs),
  ];
}

/** Rounds of one comparison; prints the table and the verdict, returns the median ratio. */
async function compare(
  tag: string,
  title: string,
  names: [string, string],
  ours: (run: string) => Promise<number>,
  base: (run: string) => Promise<number>,
  rounds: number,
  count: number,
  mb: number,
  target?: number,
  floors: [string, (run: string) => Promise<number>][] = [],
): Promise<number> {
  const rows: string[][] = [];
  const ratios: number[] = [];
  const floorRatios = floors.map(() => [] as number[]);
  const cpus: Record<string, number[]> = {};
  for (let round = 1; round <= rounds; round++) {
    const runs: [string, (run: string) => Promise<number>][] = [
      ["base", base],
      ["ours", ours],
      ...floors.map(([, fn], i): [string, (run: string) => Promise<number>] => [`floor${i}`, fn]),
    ];
    // The order rotates per round.
    const order = runs.map((_, i) => runs[(i + round - 1) % runs.length]);
    const seconds: Record<string, number> = {};
    for (const [name, fn] of order) seconds[name] = await fn(`${tag}-${name}-${round}`);
    const cpu = (name: string) => SENDER_CPU.get(`${tag}-${name}-${round}`);
    const ratio = seconds.base / seconds.ours; // instances/s ours over base
    ratios.push(ratio);
    rows.push(row(names[1], round, seconds.base, count, mb, "1.00", cpu("base")));
    rows.push(row(names[0], round, seconds.ours, count, mb, fixed(ratio), cpu("ours")));
    for (const name of ["base", "ours"]) {
      const ms = cpu(name);
      if (ms !== undefined) (cpus[name] ??= []).push(ms);
    }
    floors.forEach(([name], i) => {
      const r = seconds.base / seconds[`floor${i}`];
      floorRatios[i].push(r);
      rows.push(row(name, round, seconds[`floor${i}`], count, mb, fixed(r), cpu(`floor${i}`)));
    });
  }
  console.log(`\n${title}\n`);
  console.log(
    markdownTable(
      ["sender", "round", "seconds", "instances/s", "MB/s", "ratio", "sender CPU ms/instance"],
      rows,
    ),
  );
  if (cpus.base && cpus.ours) {
    console.log(
      `\nsender CPU per instance, medians: ${names[1]} ${fixed(median(cpus.base))} ms, ` +
        `${names[0]} ${fixed(median(cpus.ours))} ms`,
    );
  }
  const mid = median(ratios);
  const judged = target === undefined
    ? "for information"
    : `target >= ${target}: ${verdict(mid, ">=", target)}`;
  console.log(
    `\nratio median ${fixed(mid)} (rounds: ${ratios.map((r) => fixed(r)).join(", ")}; ${judged})` +
      floors.map(([name], i) => `; ${name}: median ${fixed(median(floorRatios[i]))}`).join(""),
  );
  return mid;
}

/**
 * Seconds `count` timed instances took from the least a Deno sender does (bare_sender.ts: the
 * DIMSE adapter alone), a process of its own with the gateway's flags and environment.
 */
async function bare(work: string, run: string, count: number, reuse = false): Promise<number> {
  const r = await receiver(`${work}/${run}`);
  try {
    const child = new Deno.Command(Deno.execPath(), {
      args: [
        "run",
        "--allow-read",
        "--allow-net",
        "--allow-env",
        "--v8-flags=--max-semi-space-size=2",
        new URL("./bare_sender.ts", import.meta.url).pathname,
        ...(reuse ? ["--reuse"] : []),
        String(r.peer.port),
        STORESCP_AET,
        `${work}/warmup`,
        `${work}/in`,
      ],
      env: GATEWAY_ENV,
      stdout: "null",
      stderr: "piped",
    }).spawn();
    const [result] = await Promise.all([
      child.output(),
      senderCpu(run, child.pid, r.arrivals, count, 600_000),
    ]);
    if (result.code !== 0) {
      throw new Error(
        `bare sender failed: ${new TextDecoder().decode(result.stderr).slice(-2000)}`,
      );
    }
    await r.arrivals.until(WARMUP + count, 60_000);
    return r.arrivals.span(WARMUP + 1, WARMUP + count) * count / (count - 1);
  } finally {
    await r.stop();
  }
}

/** The relay of relay.ts as a process of its own in front of `upstreamPort`. */
async function startRelayProcess(upstreamPort: number) {
  const child = new Deno.Command(Deno.execPath(), {
    args: [
      "run",
      "--allow-net",
      new URL("./relay.ts", import.meta.url).pathname,
      `${upstreamPort}`,
    ],
    stdout: "piped",
    stderr: "inherit",
  }).spawn();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the relay ended before saying its port");
    text += value;
  }
  reader.releaseLock();
  child.stdout.cancel().catch(() => {});
  return {
    port: Number(text.trim()),
    stop: async () => {
      child.kill("SIGTERM");
      await child.status;
    },
  };
}

/** Rounds of round trips over each path; the median of each path's p50 and p99. */
async function roundTrips(
  work: string,
  n: number,
  rounds: number,
  profile?: string,
  onlyFind = false,
): Promise<void> {
  const small = await generateInstances(`${work}/qr`, { studies: 5, instancesPerSeries: 2 });
  const qr = await startDcmqrscp(small.map((f) => f.path));
  const scpPort = freePort();
  const gw = await startGateway({
    configText: gatewayToml(scpPort, qr.port, qr.aet),
    // Sampled every 100 µs: an operation's pieces are a few µs each.
    denoFlags: profile
      ? ["--cpu-prof", `--cpu-prof-dir=${profile}`, "--cpu-prof-interval=100"]
      : [],
  });
  const relay = await startRelayProcess(qr.port);
  try {
    const rows: string[][] = [];
    const verdicts: string[] = [];
    const paths: [string, number, string][] = [
      ["direct to dcmqrscp", qr.port, qr.aet],
      ["Deno TCP relay -> dcmqrscp (bytes only)", relay.port, qr.aet],
      ["gateway -> dcmqrscp", scpPort, "GWBENCH"],
    ];
    const measure = async (
      name: string,
      trips: (port: number, aet: string) => Promise<number[]>,
    ) => {
      // Warm-up on every path (the gateway's JIT, its pooled association to dcmqrscp).
      for (const [, port, aet] of paths) await trips(port, aet);
      const p50 = paths.map(() => [] as number[]);
      const p99 = paths.map(() => [] as number[]);
      for (let round = 0; round < rounds; round++) {
        for (const [i, [, port, aet]] of paths.entries()) {
          const samples = await trips(port, aet);
          p50[i].push(quantile(samples, 0.5));
          p99[i].push(quantile(samples, 0.99));
        }
      }
      const base = median(p50[0]);
      for (const [i, [path]] of paths.entries()) {
        const ratio = median(p50[i]) / base;
        rows.push([name, path, fixed(median(p50[i]), 3), fixed(median(p99[i]), 3), fixed(ratio)]);
      }
      const ratio = median(p50[2]) / base;
      const relayed = median(p50[1]) / base;
      verdicts.push(
        `${name} p50 ratio ${fixed(ratio)} (target <= ${ROUND_TRIP_TARGET}): ${
          verdict(ratio, "<", ROUND_TRIP_TARGET)
        }; a bare Deno relay alone: ${fixed(relayed)}`,
      );
    };
    if (!onlyFind) await measure("C-ECHO", (port, aet) => echoRoundTrips(port, aet, n));
    await measure("C-FIND", (port, aet) => findRoundTrips(port, aet, small[0].studyUid, n));
    console.log(
      `\nRound trips (${n} per round on one association per path, ${rounds} round(s), ` +
        `medians of the rounds; C-FIND: 1 match), ms:\n`,
    );
    console.log(markdownTable(["operation", "path", "p50", "p99", "p50 ratio"], rows));
    console.log("");
    for (const v of verdicts) console.log(v);
  } finally {
    await relay.stop();
    await gw.stop();
    await qr.stop();
  }
}

async function main(): Promise<void> {
  const args = parseArgs(Deno.args);
  if (!args) {
    console.log(USAGE);
    return;
  }
  const work = await tempDir("bench-dimse-send-");
  try {
    if (args.onlyRoundTrips) {
      await roundTrips(work, args.trips, args.rounds, args.profile, args.onlyFind);
      return;
    }
    const count = args.instances;
    console.log(`generating ${count} CT-like instances (512x512, 16-bit) ...`);
    const files = await generateInstances(`${work}/in`, {
      studies: 1,
      seriesPerStudy: Math.ceil(count / 250),
      instancesPerSeries: Math.min(count, 250),
      size: 512,
    });
    for (const f of files.slice(count)) await Deno.remove(f.path);
    await generateInstances(`${work}/warmup`, { instancesPerSeries: WARMUP, size: 512 });
    const mb = files.slice(0, count).reduce((n, f) => n + f.size, 0) / 1e6;
    const base = (run: string) => direct(work, run, count);
    await compare(
      "send",
      `C-STORE send of ${count} instances (${fixed(mb, 0)} MB) to storescp, one association, ` +
        `${args.rounds} round(s): the gateway's dicom_scu delivering its queue against storescu:`,
      ["gateway dicom_scu (queued)", "DCMTK storescu"],
      (run) => queued(work, run, count, args.profile),
      base,
      args.rounds,
      count,
      mb,
      SEND_TARGET,
      [
        ["bare Deno sender (adapter only)", (run) => bare(work, run, count)],
        ["bare Deno sender, one reused buffer", (run) => bare(work, run, count, true)],
      ],
    );
    const share = await queueShare(`${work}/share-queue`, files.slice(0, count).map((f) => f.path));
    await removeDir(`${work}/share-queue`);
    console.log(
      `\nthe delivery queue alone (this process, no send), CPU per instance: accept (written, ` +
        `fsync, renamed) ${fixed(share.accept)} ms; deliver (read back, checked, removed) ` +
        `${fixed(share.deliver)} ms`,
    );
    if (args.forward) {
      await compare(
        "forward",
        `storescu -> gateway dicom_scp -> dicom_scu -> storescp (synchronous forwarding) against ` +
          `storescu -> storescp:`,
        ["storescu via gateway", "DCMTK storescu"],
        (run) => forwarded(work, run, count),
        base,
        args.rounds,
        count,
        mb,
      );
    }
    if (args.trips > 0) await roundTrips(work, args.trips, args.rounds, args.profile);
  } finally {
    await removeDir(work);
  }
}

if (import.meta.main) await main();

/** Command line of the DIMSE benchmark. */

/** What to run. */
export interface BenchArgs {
  /** Instances sent per storescu run. */
  instances: number;
  /** C-FIND round trips per path (0: skip the C-FIND part). */
  finds: number;
  /** Store rounds (each runs storescp and the gateway once, in alternating order). */
  rounds: number;
  /** Extra environment of the gateway process (over the production one). */
  gatewayEnv: Record<string, string>;
  /** Where the gateway processes leave V8 CPU profiles (`--cpu-prof`), if anywhere. */
  profile?: string;
  help: boolean;
}

/** Usage text. */
export const USAGE =
  `DIMSE receive benchmark: DCMTK storescu into DCMTK storescp, into the gateway's dicom_scp
listener (storage_dir: files written as storescp writes them, no fsync; an echo pipeline whose
answer to a C-STORE goes unread; production environment) and into a minimal Deno storage
SCP (bench/dimse/bare_scp.ts: the gateway's DIMSE adapter writing files, nothing else); then
the same with 4 storescu processes at once into storescp --fork, the gateway and the minimal
SCP; then C-FIND round trips.

usage: deno run -A bench/dimse/main.ts [instances] [finds] [--rounds N] [--gateway-env K=V]
       [--profile DIR] [--help]

  instances    CT-like 512x512 16-bit instances per run (default 1000)
  finds        C-FIND round trips per path, 0 to skip (default 300)
  --rounds N   rounds of each run, rotating which receiver goes first (default 3); the
               verdict uses the median ratio of the rounds
  --gateway-env K=V  environment variable of the gateway process over the production ones
               (repeatable), e.g. MALLOC_MMAP_THRESHOLD_=1048576 to try another allocator setting
  --profile DIR  run the gateway processes with deno's --cpu-prof; their V8 CPU profiles
               (.cpuprofile, for Chrome DevTools) are left in DIR
  --help       this text

Each receiver is a fresh process per round and first gets 50 other instances (warm-up, not
timed; the gateway's JIT compiles its receive path). What they store is kept until the end (about
1 GB per round and receiver): deleting files slows down creating new ones on ext4 for a few
minutes, so leave a few minutes between runs too. Reported per round: seconds, instances/s, MB/s
and the receiver's CPU time per instance (Linux /proc), which is less sensitive to other load on
the machine than wall time; each table gives the machine's load average before and after it.
Target: gateway instances/s >= 1.0 x storescp's (one association).`;

/** Parse `argv`; throws on anything it does not know. */
export function parseArgs(argv: string[]): BenchArgs {
  const out: BenchArgs = { instances: 1000, finds: 300, rounds: 3, gatewayEnv: {}, help: false };
  const positional: number[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--help" || a === "-h") out.help = true;
    else if (a === "--rounds") out.rounds = count(argv[++i], "--rounds", 1);
    else if (a.startsWith("--rounds=")) out.rounds = count(a.slice(9), "--rounds", 1);
    else if (a === "--gateway-env") setEnv(out.gatewayEnv, argv[++i]);
    else if (a === "--profile") out.profile = dir(argv[++i]);
    else if (a.startsWith("--profile=")) out.profile = dir(a.slice(10));
    else if (a.startsWith("--gateway-env=")) setEnv(out.gatewayEnv, a.slice(14));
    else if (/^\d+$/.test(a)) positional.push(Number(a));
    else throw new Error(`unknown argument ${a}\n\n${USAGE}`);
  }
  if (positional.length > 2) throw new Error(`too many arguments\n\n${USAGE}`);
  if (positional[0] !== undefined) out.instances = count(String(positional[0]), "instances", 1);
  if (positional[1] !== undefined) out.finds = count(String(positional[1]), "finds", 0);
  return out;
}

function count(text: string | undefined, name: string, min: number): number {
  const n = Number(text);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min}`);
  return n;
}

function dir(text: string | undefined): string {
  if (!text) throw new Error("--profile takes a directory");
  return text;
}

function setEnv(env: Record<string, string>, pair: string | undefined): void {
  const at = pair?.indexOf("=") ?? -1;
  if (!pair || at < 1) throw new Error(`--gateway-env takes NAME=VALUE, not ${pair}`);
  env[pair.slice(0, at)] = pair.slice(at + 1);
}

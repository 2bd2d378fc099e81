/**
 * The gateway executable.
 *
 *   gateway                         run the embedded default (echo under /echo on :8080)
 *   gateway --port P --management-port M   the embedded default on other ports
 *   gateway --config FILE           run FILE (hot-reloaded when it changes)
 *   gateway --validate-config FILE  check FILE; exit 0, or 1 listing every problem
 *   gateway audit verify PATH...    check the hash chains of audit trails (files or directories,
 *                                   one or several nodes'); exit 0 intact, 1 broken
 */
import { parseArgs } from "node:util";
import { dirname, resolve } from "node:path";
import { Logger } from "../shared/mod.ts";
import {
  chooseDefaultPorts,
  type DefaultPorts,
  formatProblems,
  loadConfigFile,
} from "./config/mod.ts";
import { createMetrics } from "./observability/mod.ts";
import { VERSION } from "./version.ts";

// The runtime and the audit verifier are imported by the commands that use them: `--help`,
// `--version`, a bad flag and `audit verify` do not load the whole gateway (about 0.5 s of CPU).
const loadRuntime = () => import("./runtime/mod.ts");

const USAGE = `gateway ${VERSION}: healthcare data-pipeline gateway

Usage:
  gateway [--config FILE]          run (no --config: embedded default, echo under /echo on :8080)
  gateway [--port P] [--management-port M]
                                   the embedded default with its data listener on P (default
                                   8080, or GATEWAY_PORT) and the management API on 127.0.0.1:M
                                   (default 9090, or GATEWAY_MANAGEMENT_PORT); with --config the
                                   file's [network.*] and [management] ports apply
  gateway --validate-config FILE   validate FILE and exit 0 (valid) or 1 (every problem listed)
  gateway audit verify PATH...     check the SHA-256 chains of audit trails: files (the active
                                   one and its rotated siblings, in any order) or directories
                                   (every *.jsonl trail in them); the trails of several gateways
                                   (a cluster) are checked each on its own and reported per
                                   trail; exit 0 all intact (recorded gaps are listed), 1 broken
  gateway --help | --version
`;

async function validate(file: string): Promise<number> {
  const loaded = await loadConfigFile(file);
  let problems = loaded.problems;
  if (loaded.config && problems.length === 0) {
    const { buildRuntime } = await loadRuntime();
    const logger = new Logger({ level: "error", format: "text" });
    const built = await buildRuntime(loaded.config, 0, {
      logger,
      metrics: createMetrics(),
      baseDir: dirname(resolve(file)),
      validateOnly: true,
    });
    await built.runtime?.close();
    problems = built.problems;
  }
  if (problems.length) {
    console.error(formatProblems(problems));
    console.error(`${file}: ${problems.length} problem(s)`);
    return 1;
  }
  console.log(`${file}: configuration is valid`);
  return 0;
}

async function run(configFile: string | null, defaultPorts: DefaultPorts): Promise<number> {
  const { ConfigError, Gateway } = await loadRuntime();
  const logger = new Logger({ level: "info", format: "json" });
  // The executable owns its process: its main thread's watchdog may end it for a restart.
  const gateway = new Gateway({
    configFile,
    defaultPorts,
    logger,
    metrics: createMetrics(),
    mainWatchdog: true,
  });
  const { promise: stopped, resolve: stop } = Promise.withResolvers<void>();
  let stopping = false;
  let started = false;
  // Listening before start: a signal while the workers start still drains instead of killing.
  const onStop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info("signal received", { signal });
    if (started) gateway.shutdown().finally(() => stop());
  };
  Deno.addSignalListener("SIGTERM", () => onStop("SIGTERM"));
  Deno.addSignalListener("SIGINT", () => onStop("SIGINT"));
  try {
    await gateway.start();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(formatProblems(err.problems));
      console.error(`gateway not started: ${err.problems.length} configuration problem(s)`);
    } else {
      console.error(`gateway not started: ${(err as Error).message}`);
    }
    return 1; // Deno.exit ends whatever had started
  }
  started = true;
  if (stopping) gateway.shutdown().finally(() => stop());
  if (Deno.build.os !== "windows") {
    Deno.addSignalListener("SIGHUP", () => void gateway.reload("signal"));
  }
  await stopped;
  return 0;
}

/** `gateway audit verify FILE...`. */
async function audit(args: string[]): Promise<number> {
  if (args[0] !== "verify" || args.length < 2) {
    console.error(`usage: gateway audit verify PATH...\n\n${USAGE}`);
    return 2;
  }
  const { clusterReportLines, verifyAuditTrails } = await import("./audit/mod.ts");
  const report = await verifyAuditTrails(args.slice(1));
  for (const line of clusterReportLines(report)) console.log(line);
  // Recorded gaps are not tampering (exit 0), but an operator must not miss them.
  const gaps = report.gaps
    ? `, with ${report.gaps} recorded gap(s): records are missing where listed above`
    : "";
  console.log(report.ok ? `audit trail intact${gaps}` : "audit trail BROKEN");
  return report.ok ? 0 : 1;
}

/** Entry point. */
export async function main(args: string[]): Promise<number> {
  if (args[0] === "audit") return await audit(args.slice(1));
  let parsed;
  try {
    parsed = parseArgs({
      args,
      options: {
        config: { type: "string", short: "c" },
        port: { type: "string", short: "p" },
        "management-port": { type: "string" },
        "validate-config": { type: "string" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "V" },
      },
      strict: true,
      allowPositionals: false,
    });
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const v = parsed.values;
  if (v.help) {
    console.log(USAGE);
    return 0;
  }
  if (v.version) {
    console.log(VERSION);
    return 0;
  }
  if (v["validate-config"]) return await validate(v["validate-config"]);
  const ports = chooseDefaultPorts(v, (name) => Deno.env.get(name), v.config !== undefined);
  if (!ports.ok) {
    console.error(`${ports.problem}\n\n${USAGE}`);
    return 2;
  }
  if (ports.note) console.error(`note: ${ports.note}`);
  return await run(v.config ?? null, ports.ports);
}

if (import.meta.main) {
  Deno.exit(await main(Deno.args));
}

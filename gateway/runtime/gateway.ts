/**
 * The running gateway: owns the current Runtime, the listeners, the management server and the
 * config watcher. A reload builds a complete new Runtime first and swaps it in atomically; requests
 * already running finish on the Runtime they started with. Listener changes start the new listener
 * before the old one is closed.
 */
import { dirname, resolve } from "node:path";
import type { ConfigProblem, GatewayConfig } from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import {
  type DefaultPorts,
  loadConfigText,
  loadDefaultConfig,
  STATE_DIR_ENV,
  watchConfig,
} from "../config/mod.ts";
// Cloud (issue 7): the machine token, the sync, the pulled configuration merged into the local one.
import {
  CloudIntegration,
  type CloudIntegrationOptions,
  loadWithManagedConfig,
} from "../cloud_client/mod.ts";
import { apiKeyQueryParams, AuditTrail, redactedQueryNames } from "../audit/mod.ts";
import {
  defaultWorkerCount,
  MainWatchdog,
  type UnresponsiveWorker,
  type WorkerInfo,
  WorkerPool,
} from "../workers/mod.ts";
import { DeliveryQueues, type QueueStats } from "../delivery/mod.ts";
import { Body, RequestEnvelope } from "../envelope.ts";
import type { GatewayControl, PipelineInfo, ReloadOutcome, RouteInfo } from "../management/mod.ts";
import { type DegradedComponent, DegradedComponents, type Metrics } from "../observability/mod.ts";
import { VERSION } from "../version.ts";
import { TrackingRecorder, TrackingService } from "../tracking/mod.ts";
import { buildRuntime, type Runtime } from "./build.ts";
import { HttpListeners } from "./http_listeners.ts";
import { DataPlane } from "./data_plane.ts";
import { ManagementListener } from "./management_listener.ts";
import { needsStateLock, stateDirOf, StateLock } from "./state_lock.ts";
// DICOM (issue 4): the DIMSE listeners of dicom_scp endpoints, kept across reloads.
import { DimseListeners } from "../endpoints/dicom_scp/mod.ts";
// HL7 v2 (issue 37): the MLLP listeners of hl7 endpoints, kept across reloads.
import { Hl7Listeners } from "../endpoints/hl7/mod.ts";
import { stopRenderWorkers } from "../dicom/render/mod.ts";
import { sweepStaleSpools } from "../spool.ts";
// Alerts (issue 38): rules on this gateway's state, notices to webhooks and e-mail.
import { AlertEngine, type AlertsView } from "../alerts/mod.ts";
import { type Clock, type GatewayAlertSummary, systemClock } from "../../shared/mod.ts";

/** Options of a gateway process. */
export interface GatewayOptions {
  /** Main config file; null runs `configText`, or the embedded default without it. */
  configFile: string | null;
  /**
   * A configuration given as TOML text instead of a file (a program embedding the gateway):
   * `name` stands for the file in problems, relative paths resolve against the current directory,
   * `${VAR}` comes from `env`. It is not watched; `reload()` reads the same text again.
   */
  configText?: { text: string; name: string };
  /** Ports of the embedded default (`--port`, `--management-port`); unused with a config. */
  defaultPorts?: DefaultPorts;
  logger: Logger;
  metrics: Metrics;
  /** Seconds to wait for in-flight requests on shutdown. */
  drainSeconds?: number;
  /** Cloud (issue 7): environment, clock and timings of the cloud integration (tests). */
  cloud?: Omit<CloudIntegrationOptions, "logger" | "metrics">;
  /** Environment lookup for `GATEWAY_MANAGEMENT_TOKEN` (default: the process environment). */
  env?: (name: string) => string | undefined;
  /**
   * Data-plane isolates, over `[runtime] workers` and `GATEWAY_WORKERS` (1: this thread only).
   * A program that registered custom middleware or backend types passes 1: worker threads
   * import the gateway's modules, not the program's.
   */
  workers?: number;
  /**
   * Runs the main thread's watchdog thread, which ends the process when the main thread stays
   * frozen past `[runtime] watchdog_exit_ms` (the `gateway` executable; never an embedding one).
   */
  mainWatchdog?: boolean;
  /** The clock alert rules are evaluated and notices retried on (tests pass a ManualClock). */
  clock?: Clock;
}

/** The watchdog's thresholds without `[runtime]` (the schema's defaults). */
const DEFAULT_WATCHDOG = { missMs: 2_000, killMs: 10_000, exitMs: 60_000 };

/** A configuration that failed to load or build. */
export class ConfigError extends Error {
  /** Every problem found (file, line, key). */
  readonly problems: ConfigProblem[];
  /** An error that lists `problems`. */
  constructor(problems: ConfigProblem[]) {
    super(
      `configuration is invalid (${problems.length} problem(s)): ` +
        problems.slice(0, 5).map((p) => `${p.path}: ${p.message}`).join("; "),
    );
    this.problems = problems;
  }
}

/** The gateway process state; implements what the management API needs. */
/** Past a shutdown's grace, how long an exit for a restart waits for the shutdown to finish. */
const EXIT_MARGIN_MS = 30_000;

export class Gateway implements GatewayControl {
  readonly version = VERSION;
  readonly startedAt = new Date();
  readonly configFile: string | null;
  readonly metrics: Metrics;
  readonly #configText: { text: string; name: string } | undefined;
  readonly #defaultPorts: DefaultPorts | undefined;
  readonly #workersOverride: number | undefined;
  /** The data-plane worker threads, when more than one isolate serves (gateway/workers). */
  #pool: WorkerPool | undefined;
  readonly #env: (name: string) => string | undefined;
  readonly #logger: Logger;
  /** `drainSeconds` of the options (tests), over `[runtime] shutdown_grace_secs`. */
  readonly #drainOverrideMs: number | undefined;
  /** The current runtime, the HTTP listeners and the request dispatch (runtime/data_plane.ts). */
  readonly #plane: DataPlane;
  get #current(): Runtime {
    return this.#plane.current;
  }
  set #current(runtime: Runtime) {
    this.#plane.current = runtime;
  }
  /**
   * The generation of the configuration applied last: a build is numbered one more, and only a
   * build that is applied moves it on, so `config_generation` counts applied reloads only.
   */
  #generation = 0;
  /** The data plane's HTTP and HTTP/3 listeners (runtime/http_listeners.ts). */
  get #http(): HttpListeners {
    return this.#plane.listeners;
  }
  /** The management API's listener (runtime/management_listener.ts). */
  readonly #management: ManagementListener;
  #watcher: { close(): void } | undefined;
  #ready = false;
  #reloading: Promise<ReloadOutcome> | undefined;
  #reloadAgain = false;
  /** The audit trail (`[audit]`); it outlives configurations, so its chain does too. */
  readonly #audit: AuditTrail;
  /** Delivery queues of the backends with `[backends.<name>.queue]`; they outlive configurations. */
  readonly #queues: DeliveryQueues;
  /** Components degraded by a disk that refuses writes (a paused queue): /readyz, status. */
  readonly #degraded: DegradedComponents;
  /** Message tracking: this thread's writer, and search/replay for the management API. */
  readonly #trackingRecorder: TrackingRecorder;
  readonly #tracking: TrackingService;
  /** The lock of the running configuration's state directory (state_lock.ts), when it needs one. */
  #stateLock: StateLock | undefined;
  /** The main thread's watchdog thread (`mainWatchdog` of the options). */
  readonly #mainWatchdog: MainWatchdog | undefined;
  /** True once a watchdog has asked the process to end (see #exitForRestart). */
  #exiting = false;

  constructor(opts: GatewayOptions) {
    this.configFile = opts.configFile ? resolve(opts.configFile) : null;
    this.#configText = opts.configText;
    this.#defaultPorts = opts.defaultPorts;
    this.#workersOverride = opts.workers;
    this.#env = opts.env ?? ((name) => Deno.env.get(name));
    this.#logger = opts.logger;
    this.metrics = opts.metrics;
    this.#drainOverrideMs = opts.drainSeconds === undefined ? undefined : opts.drainSeconds * 1000;
    this.#mainWatchdog = opts.mainWatchdog
      ? new MainWatchdog({
        logger: opts.logger,
        metrics: opts.metrics,
        exitGracefully: (code) => this.#exitForRestart(code),
      })
      : undefined;
    this.#degraded = new DegradedComponents({
      logger: opts.logger,
      metrics: opts.metrics.components,
    });
    this.#audit = new AuditTrail({
      logger: opts.logger,
      metrics: opts.metrics.audit,
      health: this.#degraded,
    });
    this.#queues = new DeliveryQueues(opts.logger, this.#degraded);
    this.#trackingRecorder = new TrackingRecorder({
      logger: opts.logger.child({ component: "tracking" }),
      metrics: opts.metrics,
      health: this.#degraded,
      clock: opts.clock,
    });
    this.#tracking = new TrackingService({
      recorder: this.#trackingRecorder,
      runtime: () => this.#current,
      audit: this.#audit,
      logger: opts.logger.child({ component: "tracking" }),
      clock: opts.clock,
    });
    opts.metrics.queues.source(() => this.#queues.stats());
    this.#plane = new DataPlane({
      logger: opts.logger,
      metrics: opts.metrics,
      audit: this.#audit,
      drainMs: () => this.#drainMs,
    });
    this.#management = new ManagementListener({
      control: this,
      logger: opts.logger,
      env: this.#env,
      health: this.#degraded,
    });
    // DICOM (issue 4): new associations go to the current generation's endpoint.
    this.#dimse = new DimseListeners((key) => this.#current?.dimse.get(key), opts.logger);
    this.#hl7 = new Hl7Listeners((key) => this.#current?.hl7.get(key), opts.logger);
    this.#cloud = new CloudIntegration({
      ...opts.cloud,
      logger: opts.logger,
      metrics: opts.metrics.cloud,
    });
    this.#alerts = new AlertEngine({
      clock: opts.clock ?? systemClock,
      logger: opts.logger,
      metrics: opts.metrics.alerts,
      source: {
        config: () => this.#current.config,
        queueStats: () => this.#queues.stats(),
        metricsSummary: () => this.metrics.summary(),
        collectMetrics: () => this.collectMetrics(),
        workers: () => this.workers(),
        degraded: () => this.#degraded.list(),
      },
    });
  }

  // Alerts (issue 38): evaluated on the running configuration's `[alerts]`.
  readonly #alerts: AlertEngine;

  /** Active and recent alerts and the channels' figures (`GET /{prefix}/alerts`). */
  alerts(): AlertsView {
    return this.#alerts.view();
  }

  /** The alerts of the status report to the cloud (metadata only). */
  alertSummaries(): GatewayAlertSummary[] {
    return this.#alerts.statusAlerts();
  }

  /** Evaluates every alert rule now (the timer does it every `evaluate_interval_secs`). */
  evaluateAlerts(): Promise<void> {
    return this.#alerts.evaluate();
  }

  // Cloud (issue 7): token store, sync and the management API's cloud operations.
  readonly #cloud: CloudIntegration;

  /** The delivery queues' counters (status reports to the cloud). */
  queueStats(): QueueStats[] {
    return this.#queues.stats();
  }

  /** Components degraded (not down) now: a queue paused by its disk (`/readyz`, status report). */
  degraded(): DegradedComponent[] {
    return this.#degraded.list();
  }

  /** The delivery queues, for the management API. */
  get queues(): DeliveryQueues {
    return this.#queues;
  }

  /** Message tracking's search, view and replay, for the management API. */
  get tracking(): TrackingService {
    return this.#tracking;
  }

  /** The cloud operations of the management API. */
  get cloud(): CloudIntegration {
    return this.#cloud;
  }

  // DICOM (issue 4): DIMSE listeners by `bind_addr:port`.
  readonly #dimse: DimseListeners;
  // HL7 v2 (issue 37): MLLP listeners by `bind_addr:port`.
  readonly #hl7: Hl7Listeners;

  /**
   * Load the config, start every listener; throws ConfigError with every problem when invalid,
   * and StateDirLocked when another gateway process holds the state directory.
   */
  async start(): Promise<void> {
    await this.#cloud.init(this);
    let runtime: Runtime | ConfigError;
    try {
      runtime = await this.#load(async (config) => {
        // Before anything of the state is touched (tokens, audit file, queues): one process only.
        this.#stateLock = await this.#lockStateDir(config);
        // The token store is ready before the first build (transforms may be downloaded by id).
        await this.#cloud.configure(config, this.#baseDir());
      });
    } catch (err) {
      this.#releaseStateLock();
      throw err;
    }
    if (runtime instanceof ConfigError) {
      this.#releaseStateLock();
      throw runtime;
    }
    // Tee bodies spooled by a gateway that was killed mid-request (patient data): removed.
    void sweepStaleSpools().then((removed) => {
      if (removed) this.#logger.info("stale spool files removed", { removed });
    });
    const auditProblem = await this.#configureAudit(runtime);
    if (auditProblem) {
      await runtime.close();
      this.#releaseStateLock();
      throw new ConfigError([auditProblem]);
    }
    this.#current = runtime;
    this.#generation = runtime.generation;
    this.#tracking.configure(runtime.config);
    await this.#queues.attach(runtime, new Set(runtime.queued.keys()));
    this.#applyLogging(runtime.config);
    HttpListeners.assertPortsFree(runtime.config);
    await this.#http.sync(runtime.config);
    await this.#dimse.sync(runtime.dimse.values()); // DICOM (issue 4)
    await this.#hl7.sync(runtime.hl7.values()); // HL7 v2 (issue 37)
    await this.#management.sync(runtime.config, this.#baseDir());
    await this.#startWorkers(runtime);
    this.#configureWatchdogs(runtime.config);
    this.#watch(runtime.config);
    this.#ready = true;
    await this.#alerts.configure(runtime.config);
    void this.#alerts.evaluate();
    void this.#cloud.run();
    this.#logger.info("gateway started", {
      version: VERSION,
      config_file: this.configFile ?? this.#configText?.name ?? "<embedded default>",
      listeners: this.#http.describe(),
      workers: (this.#pool?.size ?? 0) + 1,
      management: this.#management.port() ?? null,
    });
  }

  /** Brings the data-plane workers' figures into `metrics` (before /metrics or a status report). */
  async collectMetrics(): Promise<void> {
    await this.#pool?.collect();
  }

  /** The data-plane isolates: 0 is this thread, then the worker threads. */
  workers(): WorkerInfo[] {
    // This thread answers the request asking: it is serving.
    const main: WorkerInfo = {
      index: 0,
      generation: this.#current.generation,
      requests: this.#requestsHere(),
      state: "serving",
      healthy: true,
      heartbeat_age_ms: 0,
      replacements: 0,
    };
    return [main, ...(this.#pool?.info() ?? [])];
  }

  /** Worker threads frozen now (the watchdog's view): `/readyz` fails while there is one. */
  unresponsiveWorkers(): UnresponsiveWorker[] {
    return this.#pool?.unresponsive() ?? [];
  }

  /**
   * Test hook: blocks data-plane worker `index`'s event loop for at most `ms`; the function
   * returned ends the block sooner. Throws unless the process was started with
   * `GATEWAY_TEST_HOOKS=1` (no route or configuration reaches it).
   */
  blockWorkerForTest(index: number, ms: number): () => void {
    if (!this.#pool) throw new Error("this gateway runs no data-plane worker threads");
    return this.#pool.testBlock(index, ms);
  }

  /** The watchdogs take the thresholds of `config`'s `[runtime]`. */
  #configureWatchdogs(config: GatewayConfig): void {
    const missMs = config.runtime?.watchdog_miss_ms ?? DEFAULT_WATCHDOG.missMs;
    this.#pool?.watch({
      missMs,
      killMs: config.runtime?.watchdog_kill_ms ?? DEFAULT_WATCHDOG.killMs,
    });
    this.#mainWatchdog?.configure({
      missMs,
      exitMs: config.runtime?.watchdog_exit_ms ?? DEFAULT_WATCHDOG.exitMs,
    });
  }

  /** Requests this thread finished: its own counters minus what workers reported into them. */
  #requestsHere(): number {
    let total = 0;
    for (const p of Object.values(this.metrics.summary().pipelines)) total += p.requests;
    for (const w of this.#pool?.info() ?? []) total -= w.requests;
    return total;
  }

  /** Starts `[runtime] workers - 1` worker threads on the first generation. */
  async #startWorkers(runtime: Runtime): Promise<void> {
    const count = this.#workersOverride ?? defaultWorkerCount(runtime.config.runtime, this.#env);
    if (count <= 1) return;
    const pool = new WorkerPool(count - 1, {
      logger: this.#logger,
      metrics: this.metrics,
      audit: this.#audit,
      queue: (backend) => this.#queues.get(backend),
      // A worker's degraded components (its tracking writer) are listed with the main thread's.
      health: this.#degraded,
    });
    this.#pool = pool;
    const problems = await pool.prepare(
      runtime.generation,
      runtime.config,
      this.#baseDir(),
      new Map([...runtime.sharedMemory, ...this.#plane.listenerMemory]),
      runtime.config.audit ? redactedQueryNames(runtime.config) : null,
    );
    if (problems.length) throw new ConfigError(problems);
    await pool.commit(runtime.generation);
  }

  /** Ports actually bound, by network name (tests bind port 0). */
  ports(): Record<string, number> {
    return this.#http.ports();
  }

  /** HTTP/3 (issue 5): UDP ports of the QUIC listeners, by network name. */
  http3Ports(): Record<string, number> {
    return this.#http.http3Ports();
  }

  /** Port of the management listener, if running. */
  managementPort(): number | undefined {
    return this.#management.port();
  }

  /** The config serving traffic. */
  config(): GatewayConfig {
    return this.#current.config;
  }

  /** Generation of the config serving traffic (1 at start, +1 per successful reload). */
  generation(): number {
    return this.#current.generation;
  }

  /** True once started and not draining. */
  ready(): boolean {
    return this.#ready;
  }

  /** Routes of every network. */
  routes(): RouteInfo[] {
    const rt = this.#current;
    const byEndpoint = new Map<string, RouteInfo>();
    for (const net of Object.keys(rt.config.network)) {
      for (const r of rt.routes.list(net)) {
        const ep = r.endpoint;
        const existing = byEndpoint.get(ep.config.name);
        if (existing) {
          existing.networks.push(net);
          continue;
        }
        byEndpoint.set(ep.config.name, {
          path: r.prefix,
          methods: ep.methods,
          endpoint: ep.config.name,
          service: ep.config.service,
          pipeline: ep.pipeline.name,
          networks: [net],
          served_by: "all_workers",
          workers: (this.#pool?.size ?? 0) + 1,
        });
      }
    }
    for (const route of byEndpoint.values()) {
      const h3 = route.networks.filter((n) => rt.config.network[n]?.http3);
      if (h3.length) route.http3_networks = h3;
    }
    return [...byEndpoint.values()].sort((a, b) => a.path.localeCompare(b.path));
  }

  /** Pipelines with their parts and target health. */
  pipelines(): PipelineInfo[] {
    const rt = this.#current;
    return [...rt.pipelines.values()].map((p) => ({
      name: p.name,
      endpoints: p.config.endpoints,
      middleware: p.middleware.map((m) => ({
        name: m.name,
        type: rt.config.middleware[m.name]?.type ?? "unknown",
      })),
      backends: p.backends.map((b) => {
        const pool =
          (b as { pool?: { targets: { name: string; url: string; healthy(): boolean }[] } })
            .pool;
        return {
          name: b.name,
          service: b.config.service,
          targets: pool
            ? pool.targets.map((t) => ({ name: t.name, url: t.url, healthy: t.healthy() }))
            : [],
        };
      }),
    }));
  }

  /** Reload on demand; concurrent calls share one reload and a trailing one runs after it. */
  reload(trigger: "api" | "watch" | "signal" | "cloud"): Promise<ReloadOutcome> {
    if (this.#reloading) {
      this.#reloadAgain = true;
      return this.#reloading;
    }
    this.#reloading = this.#doReload(trigger).finally(() => {
      this.#reloading = undefined;
      if (this.#reloadAgain) {
        this.#reloadAgain = false;
        void this.reload(trigger);
      }
    });
    return this.#reloading;
  }

  /** A reload that reads the files as they are now: it waits for one already running. */
  async reloadNow(): Promise<ReloadOutcome> {
    while (this.#reloading) await this.#reloading.catch(() => {});
    return await this.reload("cloud");
  }

  async #doReload(trigger: string): Promise<ReloadOutcome> {
    const started = performance.now();
    // A configuration that moves the state directory (or starts to need its lock) locks the new
    // one before anything is built; the old lock goes once the new configuration runs.
    let lock: StateLock | undefined;
    const dropLock = () => {
      if (lock !== this.#stateLock) lock?.release();
    };
    const next = await this.#load(async (config) => {
      try {
        lock = await this.#lockStateDir(config);
      } catch (err) {
        throw new ConfigError([{
          file: this.#sourceName,
          path: "cloud.state_dir",
          message: (err as Error).message,
        }]);
      }
    });
    const duration_ms = Math.round((performance.now() - started) * 100) / 100;
    if (next instanceof ConfigError) {
      dropLock();
      this.metrics.reload(false);
      this.#logger.error("reload rejected: the running configuration stays", {
        trigger,
        problems: next.problems.map((p) =>
          `${p.file}${p.line ? ":" + p.line : ""}: ${p.path}: ${p.message}`
        ),
      });
      return {
        ok: false,
        generation: this.#current.generation,
        duration_ms,
        errors: next.problems,
      };
    }
    try {
      // New listeners start before the runtime swap; old ones close after it. This thread's
      // first: it checks that a new port is free, which the workers' listeners would not be.
      await this.#http.sync(next.config, true);
      // Every worker builds the new generation and starts its listeners, or none switches.
      const workerProblems = await this.#pool?.prepare(
        next.generation,
        next.config,
        this.#baseDir(),
        new Map([...next.sharedMemory, ...this.#plane.listenerMemory]),
        next.config.audit ? redactedQueryNames(next.config) : null,
      );
      if (workerProblems?.length) {
        dropLock();
        await this.#http.closeStale(this.#current.config);
        await next.close();
        this.metrics.reload(false);
        this.#logger.error(
          "reload rejected by a data-plane worker: the running configuration stays",
          { trigger, problems: workerProblems.map((p) => `${p.path}: ${p.message}`) },
        );
        return {
          ok: false,
          generation: this.#current.generation,
          duration_ms,
          errors: workerProblems,
        };
      }
      await this.#dimse.sync(next.dimse.values()); // DICOM (issue 4)
      await this.#hl7.sync(next.hl7.values()); // HL7 v2 (issue 37)
      await this.#management.sync(next.config, this.#baseDir());
      const auditProblem = await this.#configureAudit(next);
      if (auditProblem) throw new Error(auditProblem.message);
    } catch (err) {
      dropLock();
      await next.close();
      this.#pool?.abort(next.generation);
      await this.#http.closeStale(this.#current.config).catch(() => {});
      this.metrics.reload(false);
      const problem: ConfigProblem = {
        file: this.#sourceName,
        path: "network",
        message: (err as Error).message,
      };
      this.#logger.error("reload rejected: a listener could not start", { error: problem.message });
      return { ok: false, generation: this.#current.generation, duration_ms, errors: [problem] };
    }
    const old = this.#current;
    this.#current = next;
    this.#generation = next.generation;
    if (lock !== this.#stateLock) {
      this.#stateLock?.release();
      this.#stateLock = lock;
    }
    await this.#pool?.commit(next.generation);
    this.#configureWatchdogs(next.config);
    this.#tracking.configure(next.config);
    await this.#queues.attach(next, new Set(next.queued.keys()));
    old.retire();
    await this.#http.closeStale(next.config);
    await this.#dimse.closeStale(next.dimse.values()); // DICOM (issue 4)
    await this.#hl7.closeStale(next.hl7.values()); // HL7 v2 (issue 37)
    this.#applyLogging(next.config);
    this.#watch(next.config);
    const workers = defaultWorkerCount(next.config.runtime, this.#env);
    if (this.#workersOverride === undefined && workers !== (this.#pool?.size ?? 0) + 1) {
      this.#logger.warn("[runtime] workers changes at the next restart", {
        running: (this.#pool?.size ?? 0) + 1,
        configured: workers,
      });
    }
    // Not awaited: a sync applying a pulled configuration waits for this reload to end.
    void this.#cloud.configure(next.config, this.#baseDir());
    await this.#alerts.configure(next.config);
    this.metrics.reload(true);
    this.#logger.info("configuration reloaded", {
      trigger,
      generation: next.generation,
      duration_ms,
    });
    return { ok: true, generation: next.generation, duration_ms };
  }

  /**
   * Ends the process the gateway owns for its supervisor to restart (a watchdog asked while this
   * thread runs): the normal shutdown first (in-flight requests drained, audit records and queues
   * written), then exit `code`. A shutdown that cannot finish still ends, past its grace and a
   * margin. `Deno.exit` ends a process whose worker thread is stuck in synchronous code too.
   */
  #exitForRestart(code: number): void {
    if (this.#exiting) return;
    this.#exiting = true;
    const hard = setTimeout(() => Deno.exit(code), this.#drainMs + EXIT_MARGIN_MS);
    void this.shutdown().catch(() => {}).finally(() => {
      clearTimeout(hard);
      Deno.exit(code);
    });
  }

  /** The grace period of a shutdown: the options' override, else the running configuration's. */
  get #drainMs(): number {
    return this.#drainOverrideMs ??
      (this.#current?.config.runtime?.shutdown_grace_secs ?? 10) * 1000;
  }

  /** Stop accepting, drain in-flight requests (bounded), close everything. */
  async shutdown(): Promise<void> {
    this.#ready = false;
    this.#watcher?.close();
    await this.#alerts.stop();
    await this.#cloud.stop();
    // The workers' figures are fresh (an unresponsive worker is not waited for).
    await this.#pool?.collect();
    this.#logger.info("shutting down: draining in-flight requests", {
      in_flight: (this.#current?.inFlight ?? 0) + (this.#pool?.inFlight() ?? 0),
    });
    const graceMs = this.#drainMs;
    const deadline = Date.now() + graceMs;
    // HTTP listeners and DIMSE associations finish side by side, within the one grace period.
    const drained = Promise.all([
      this.#http.shutdown(),
      this.#dimse.close(true),
      this.#hl7.close(true),
      this.#pool?.drain(Math.max(0, deadline - Date.now())),
    ]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((r) =>
      timer = setTimeout(() => r("timeout"), Math.max(0, deadline - Date.now()))
    );
    // The listeners stop waiting at the deadline too (and close what is left): a drain that ends
    // there has timed out.
    const outcome = await Promise.race([
      drained.then(() => Date.now() < deadline ? "drained" as const : "timeout" as const),
      timeout,
    ]);
    clearTimeout(timer);
    if (outcome === "timeout") {
      this.#logger.warn("drain timed out; closing remaining connections", {
        grace_secs: graceMs / 1000,
      });
    }
    // The management API served through the drain; its clients get what is left of the grace.
    await this.#management.shutdown(Math.max(0, deadline - Date.now()));
    await this.#dimse.close(); // what is left of the DIMSE associations
    await this.#hl7.close(); // and of the MLLP connections
    // Every request has ended: deliveries stop (what waits stays on disk), the last audit
    // records are written, then the backends close.
    await this.#queues.close();
    // Tracked records still queued are written before the audit trail closes.
    this.#tracking.close();
    await this.#trackingRecorder.close();
    await this.#audit.close();
    await this.#current?.close();
    stopRenderWorkers();
    // Last: the state is written; another gateway may take the directory now.
    this.#releaseStateLock();
    this.#mainWatchdog?.stop();
    this.#logger.info("gateway stopped");
  }

  /** Lets the state directory go (a stop, or a start that failed before anything ran). */
  #releaseStateLock(): void {
    this.#stateLock?.release();
    this.#stateLock = undefined;
  }

  /**
   * The lock of `config`'s state directory when the configuration needs one (the one held
   * already when it is the same directory); throws StateDirLocked when another process holds it.
   */
  async #lockStateDir(config: GatewayConfig): Promise<StateLock | undefined> {
    if (!needsStateLock(config, this.#env)) return undefined;
    const dir = stateDirOf(config, this.#baseDir());
    if (this.#stateLock?.dir === dir) return this.#stateLock;
    return await StateLock.acquire(dir);
  }

  async #load(
    beforeBuild?: (config: GatewayConfig) => Promise<void>,
  ): Promise<Runtime | ConfigError> {
    let loaded: { config?: GatewayConfig; problems: ConfigProblem[] };
    try {
      loaded = this.configFile
        ? await loadWithManagedConfig(this.configFile)
        : this.#configText
        ? await loadConfigText(this.#configText.text, this.#configText.name, { env: this.#env })
        : await loadDefaultConfig(
          this.#defaultPorts,
          this.#env(STATE_DIR_ENV)?.trim() || undefined,
        );
    } catch (err) {
      return new ConfigError([{
        file: this.#sourceName,
        path: "",
        message: (err as Error).message,
      }]);
    }
    if (!loaded.config || loaded.problems.length) return new ConfigError(loaded.problems);
    try {
      await beforeBuild?.(loaded.config);
    } catch (err) {
      if (err instanceof ConfigError) return err;
      throw err;
    }
    const built = await buildRuntime(loaded.config, this.#generation + 1, {
      logger: this.#logger,
      metrics: this.metrics,
      baseDir: this.#baseDir(),
      transformSource: this.#cloud.transformSource(loaded.config),
      audit: this.#audit,
      queues: this.#queues,
      tracking: this.#trackingRecorder,
      health: this.#degraded,
    });
    if (!built.runtime) return new ConfigError(built.problems);
    return built.runtime;
  }

  /**
   * Points the audit trail at `runtime`'s `[audit]` (AuditEvents go through the audit backend
   * of whichever runtime is current when they are sent); the problem when its file cannot be
   * opened.
   */
  async #configureAudit(runtime: Runtime): Promise<ConfigProblem | undefined> {
    const config = runtime.config.audit;
    try {
      // Wherever a key may travel in a query, its value stays out of the trail.
      await this.#audit.configure(
        config,
        config?.fhir_backend ? (bundle, signal) => this.#sendAudit(bundle, signal) : undefined,
        apiKeyQueryParams(runtime.config),
      );
      return undefined;
    } catch (err) {
      return {
        file: this.#sourceName,
        path: "audit.file",
        message: `the audit file cannot be opened: ${(err as Error).message}`,
      };
    }
  }

  /** One batch of AuditEvents to the current configuration's audit backend. */
  async #sendAudit(
    bundle: Uint8Array,
    signal: AbortSignal,
  ): Promise<{ status: number; body: string }> {
    const rt = this.#current;
    const backend = rt.auditBackend;
    if (!backend) throw new Error("no audit backend in the running configuration");
    rt.acquire();
    try {
      const req = new RequestEnvelope({
        id: crypto.randomUUID(),
        protocol: "http",
        method: "POST",
        path: "/",
        headers: new Headers({ accept: "application/fhir+json" }),
        body: new Body(bundle, "application/fhir+json"),
        endpoint: "audit",
        signal,
      });
      const res = await backend.invoke(req, { signal, logger: this.#logger });
      return { status: res.status, body: await res.body.text() };
    } finally {
      rt.release();
    }
  }

  /** What problems of the configuration name as its file. */
  get #sourceName(): string {
    return this.configFile ?? this.#configText?.name ?? "<embedded>";
  }

  /** Directory relative paths of the config resolve against. */
  #baseDir(): string {
    return this.configFile ? dirname(this.configFile) : Deno.cwd();
  }

  #applyLogging(config: GatewayConfig): void {
    this.#logger.configure(config.logging.level, config.logging.format);
  }

  #watch(config: GatewayConfig): void {
    if (!this.configFile) return;
    this.#watcher?.close();
    const dirs = config.pipelines_path
      ? [resolve(dirname(this.configFile), config.pipelines_path)]
      : [];
    this.#watcher = watchConfig(config.source_files, dirs, () => {
      void this.reload("watch");
    });
  }
}

/**
 * The running gateway: owns the current Runtime, the listeners, the management server and the
 * config watcher. A reload builds a complete new Runtime first and swaps it in atomically; requests
 * already running finish on the Runtime they started with. Listener changes start the new listener
 * before the old one is closed.
 */
import { dirname, resolve } from "node:path";
import type { ConfigProblem, GatewayConfig } from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import { loadDefaultConfig, watchConfig } from "../config/mod.ts";
// Cloud (issue 7): the machine token, the sync, the pulled configuration merged into the local one.
import {
  CloudIntegration,
  type CloudIntegrationOptions,
  loadWithManagedConfig,
} from "../cloud_client/mod.ts";
import {
  assertPortFree,
  type HttpListener,
  listenerKey,
  readTls,
  serveNetwork,
} from "../adapters/mod.ts";
// HTTP/3 (issue 5): the QUIC listener of a network and its Alt-Svc advertisement.
import {
  altSvcValue,
  assertUdpPortFree,
  checkHttp3Material,
  type Http3Listener,
  http3ListenerKey,
  readHttp3Tls,
  serveHttp3,
  withAltSvc,
} from "../adapters/mod.ts";
import type { Protocol } from "../envelope.ts";
import { errorBody, GatewayError } from "../errors.ts";
import type { GatewayControl, PipelineInfo, ReloadOutcome, RouteInfo } from "../management/mod.ts";
import {
  createManagementApp,
  type ManagementToken,
  normalizePrefix,
  resolveManagementToken,
} from "../management/mod.ts";
import { removeIfExists, writeFileAtomic } from "../../shared/mod.ts";
import { discoveryPath, type ManagementDiscovery } from "../../shared/mod.ts";
import { isLoopbackAddress } from "../../shared/gateway_config/mod.ts";
import { DEFAULT_GUARD, guardedServe, type GuardedServer } from "../../shared/net/mod.ts";
import type { Metrics } from "../observability/mod.ts";
import { requestIdOf, RequestRecord } from "../pipeline/mod.ts";
import { VERSION } from "../version.ts";
import { buildRuntime, type Runtime } from "./build.ts";
// DICOM (issue 4): the DIMSE listeners of dicom_scp endpoints, kept across reloads.
import { DimseListeners } from "../endpoints/dicom_scp/mod.ts";
import { stopRenderWorkers } from "../dicom/render/mod.ts";
import { requestTarget } from "../endpoints/mod.ts";

/** Options of a gateway process. */
export interface GatewayOptions {
  /** Main config file; null runs the embedded default. */
  configFile: string | null;
  logger: Logger;
  metrics: Metrics;
  /** Seconds to wait for in-flight requests on shutdown. */
  drainSeconds?: number;
  /** Cloud (issue 7): environment, clock and timings of the cloud integration (tests). */
  cloud?: Omit<CloudIntegrationOptions, "logger" | "metrics">;
  /** Environment lookup for `GATEWAY_MANAGEMENT_TOKEN` (default: the process environment). */
  env?: (name: string) => string | undefined;
}

/** A configuration that failed to load or build. */
export class ConfigError extends Error {
  readonly problems: ConfigProblem[];
  constructor(problems: ConfigProblem[]) {
    super(
      `configuration is invalid (${problems.length} problem(s)): ` +
        problems.slice(0, 5).map((p) => `${p.path}: ${p.message}`).join("; "),
    );
    this.problems = problems;
  }
}

interface ManagementListener {
  key: string;
  server: GuardedServer;
  /** The discovery file written for local tools (removed on shutdown), if any. */
  discovery?: string;
}

/** The gateway process state; implements what the management API needs. */
export class Gateway implements GatewayControl {
  readonly version = VERSION;
  readonly startedAt = new Date();
  readonly configFile: string | null;
  readonly metrics: Metrics;
  readonly #logger: Logger;
  readonly #drainMs: number;
  #current!: Runtime;
  #generation = 0;
  #listeners = new Map<string, HttpListener>();
  // HTTP/3 (issue 5): QUIC listeners by key, and the Alt-Svc value of each network that has one.
  #h3Listeners = new Map<string, Http3Listener>();
  #altSvc = new Map<string, string>();
  #management: ManagementListener | undefined;
  /** The management API's bearer token and accepted host names (read on start and reload). */
  #managementToken: ManagementToken | undefined;
  #allowedHosts: readonly string[] = [];
  readonly #env: (name: string) => string | undefined;
  #watcher: { close(): void } | undefined;
  #ready = false;
  #reloading: Promise<ReloadOutcome> | undefined;
  #reloadAgain = false;

  constructor(opts: GatewayOptions) {
    this.configFile = opts.configFile ? resolve(opts.configFile) : null;
    this.#logger = opts.logger;
    this.metrics = opts.metrics;
    this.#drainMs = (opts.drainSeconds ?? 10) * 1000;
    this.#env = opts.env ?? ((name) => Deno.env.get(name));
    // DICOM (issue 4): new associations go to the current generation's endpoint.
    this.#dimse = new DimseListeners((key) => this.#current?.dimse.get(key), opts.logger);
    this.#cloud = new CloudIntegration({
      ...opts.cloud,
      logger: opts.logger,
      metrics: opts.metrics.cloud,
    });
  }

  // Cloud (issue 7): token store, sync and the management API's cloud operations.
  readonly #cloud: CloudIntegration;

  /** The cloud operations of the management API. */
  get cloud(): CloudIntegration {
    return this.#cloud;
  }

  // DICOM (issue 4): DIMSE listeners by `bind_addr:port`.
  readonly #dimse: DimseListeners;

  /** Load the config, start every listener; throws ConfigError with every problem when invalid. */
  async start(): Promise<void> {
    await this.#cloud.init(this);
    // The token store is ready before the first build (transforms may be downloaded by id).
    const runtime = await this.#load((config) => this.#cloud.configure(config, this.#baseDir()));
    if (runtime instanceof ConfigError) throw runtime;
    this.#current = runtime;
    this.#applyLogging(runtime.config);
    for (const net of Object.values(runtime.config.network)) {
      assertPortFree(net.bind, net.port, `network ${net.name}`);
      // HTTP/3 (issue 5): the UDP port of the QUIC listener.
      if (net.http3) assertUdpPortFree(net.http3.bind, net.http3.port, `network ${net.name} http3`);
    }
    await this.#syncListeners(runtime.config);
    await this.#dimse.sync(runtime.dimse.values()); // DICOM (issue 4)
    await this.#syncManagement(runtime.config);
    this.#watch(runtime.config);
    this.#ready = true;
    void this.#cloud.run();
    this.#logger.info("gateway started", {
      version: VERSION,
      config_file: this.configFile ?? "<embedded default>",
      listeners: [...this.#listeners.values()].map((l) => `${l.network}:${l.port}`),
      management: this.#management ? this.#management.server.addr.port : null,
    });
  }

  /** Ports actually bound, by network name (tests bind port 0). */
  ports(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const l of this.#listeners.values()) out[l.network] = l.port;
    return out;
  }

  /** HTTP/3 (issue 5): UDP ports of the QUIC listeners, by network name. */
  http3Ports(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const l of this.#h3Listeners.values()) out[l.network] = l.port;
    return out;
  }

  /** Port of the management listener, if running. */
  managementPort(): number | undefined {
    return this.#management?.server.addr.port;
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
        });
      }
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
    const next = await this.#load();
    const duration_ms = Math.round((performance.now() - started) * 100) / 100;
    if (next instanceof ConfigError) {
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
      // New listeners start before the runtime swap; old ones close after it.
      await this.#syncListeners(next.config, true);
      await this.#dimse.sync(next.dimse.values()); // DICOM (issue 4)
      await this.#syncManagement(next.config);
    } catch (err) {
      await next.close();
      this.metrics.reload(false);
      const problem: ConfigProblem = {
        file: this.configFile ?? "<embedded>",
        path: "network",
        message: (err as Error).message,
      };
      this.#logger.error("reload rejected: a listener could not start", { error: problem.message });
      return { ok: false, generation: this.#current.generation, duration_ms, errors: [problem] };
    }
    const old = this.#current;
    this.#current = next;
    old.retire();
    await this.#closeStaleListeners(next.config);
    await this.#dimse.closeStale(next.dimse.values()); // DICOM (issue 4)
    this.#applyLogging(next.config);
    this.#watch(next.config);
    // Not awaited: a sync applying a pulled configuration waits for this reload to end.
    void this.#cloud.configure(next.config, this.#baseDir());
    this.metrics.reload(true);
    this.#logger.info("configuration reloaded", {
      trigger,
      generation: next.generation,
      duration_ms,
    });
    return { ok: true, generation: next.generation, duration_ms };
  }

  /** Stop accepting, drain in-flight requests (bounded), close everything. */
  async shutdown(): Promise<void> {
    this.#ready = false;
    this.#watcher?.close();
    await this.#cloud.stop();
    this.#logger.info("shutting down: draining in-flight requests", {
      in_flight: this.#current?.inFlight ?? 0,
    });
    const servers = [...this.#listeners.values()].map((l) => l.server);
    const drained = Promise.all([
      ...servers.map((s) => s.shutdown()),
      // HTTP/3 (issue 5): GOAWAY, then the same bounded drain.
      ...[...this.#h3Listeners.values()].map((l) => l.server.shutdown(this.#drainMs)),
    ]);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<"timeout">((r) =>
      timer = setTimeout(() => r("timeout"), this.#drainMs)
    );
    const outcome = await Promise.race([drained.then(() => "drained" as const), timeout]);
    clearTimeout(timer);
    if (outcome === "timeout") {
      this.#logger.warn("drain timed out; closing remaining connections");
    }
    await this.#management?.server.shutdown();
    if (this.#management?.discovery) await removeIfExists(this.#management.discovery);
    await this.#dimse.close(); // DICOM (issue 4)
    await this.#current?.close();
    stopRenderWorkers();
    this.#logger.info("gateway stopped");
  }

  async #load(
    beforeBuild?: (config: GatewayConfig) => Promise<void>,
  ): Promise<Runtime | ConfigError> {
    let loaded: { config?: GatewayConfig; problems: ConfigProblem[] };
    try {
      loaded = this.configFile
        ? await loadWithManagedConfig(this.configFile)
        : await loadDefaultConfig();
    } catch (err) {
      return new ConfigError([{
        file: this.configFile ?? "<embedded>",
        path: "",
        message: (err as Error).message,
      }]);
    }
    if (!loaded.config || loaded.problems.length) return new ConfigError(loaded.problems);
    await beforeBuild?.(loaded.config);
    const built = await buildRuntime(loaded.config, this.#generation + 1, {
      logger: this.#logger,
      metrics: this.metrics,
      baseDir: this.#baseDir(),
      transformSource: this.#cloud.transformSource(loaded.config),
    });
    if (!built.runtime) return new ConfigError(built.problems);
    this.#generation++;
    return built.runtime;
  }

  /** Directory relative paths of the config resolve against. */
  #baseDir(): string {
    return this.configFile ? dirname(this.configFile) : Deno.cwd();
  }

  #applyLogging(config: GatewayConfig): void {
    this.#logger.configure(config.logging.level, config.logging.format);
  }

  async #syncListeners(config: GatewayConfig, checkPorts = false): Promise<void> {
    const started: HttpListener[] = [];
    try {
      for (const net of Object.values(config.network)) {
        const tls = await readTls(net);
        const key = listenerKey(net, tls);
        if (this.#listeners.has(key)) continue;
        if (checkPorts && !this.#holdsPort(net.bind, net.port)) {
          assertPortFree(net.bind, net.port, `network ${net.name}`);
        }
        const listener = serveNetwork(
          net,
          tls,
          // HTTP/3 (issue 5): responses advertise the network's QUIC listener with Alt-Svc.
          (req, info, secure) => {
            const response = this.#handle(req, info, secure, net.name);
            const altSvc = this.#altSvc.get(net.name);
            return altSvc ? response.then((r) => withAltSvc(r, altSvc)) : response;
          },
          (err) => this.#internalError(err),
        );
        started.push(listener);
      }
    } catch (err) {
      for (const l of started) await l.server.shutdown();
      throw err;
    }
    for (const l of started) this.#listeners.set(l.key, l);
    try {
      await this.#syncHttp3Listeners(config, checkPorts);
    } catch (err) {
      for (const l of started) {
        this.#listeners.delete(l.key);
        await l.server.shutdown();
      }
      throw err;
    }
  }

  /**
   * HTTP/3 (issue 5): start the QUIC listener of each network with `[network.<name>.http3]`
   * that is not running yet; a listener whose certificate changed hands its UDP socket over.
   */
  async #syncHttp3Listeners(config: GatewayConfig, checkPorts: boolean): Promise<void> {
    const started: Http3Listener[] = [];
    try {
      for (const net of Object.values(config.network)) {
        if (!net.http3) continue;
        const material = (await readHttp3Tls(net))!;
        const key = http3ListenerKey(net, material);
        if (this.#h3Listeners.has(key)) continue;
        checkHttp3Material(material, `network ${net.name} http3`);
        const previous = [...this.#h3Listeners.values()].find((l) =>
          l.config.port === net.http3!.port && l.config.bind === net.http3!.bind
        );
        if (checkPorts && !previous) {
          assertUdpPortFree(net.http3.bind, net.http3.port, `network ${net.name} http3`);
        }
        const listener = serveHttp3(
          net,
          material,
          (req, info) => this.#handle(req, info, true, net.name, "h3"),
          (err, where) => this.#logger.warn("http3", { where, error: (err as Error)?.message }),
          previous,
        );
        started.push(listener);
      }
    } catch (err) {
      for (const l of started) await l.server.shutdown(0);
      throw err;
    }
    for (const l of started) this.#h3Listeners.set(l.key, l);
    this.#altSvc.clear();
    for (const net of Object.values(config.network)) {
      const l = [...this.#h3Listeners.values()].filter((x) => x.network === net.name).pop();
      if (net.http3 && l) this.#altSvc.set(net.name, altSvcValue(l.port));
    }
  }

  #holdsPort(bind: string, port: number): boolean {
    for (const l of this.#listeners.values()) {
      const addr = l.server.addr;
      if (addr.port === port && (addr.hostname === bind || bind === "0.0.0.0")) return true;
    }
    return false;
  }

  async #closeStaleListeners(config: GatewayConfig): Promise<void> {
    const wanted = new Set<string>();
    for (const net of Object.values(config.network)) {
      wanted.add(listenerKey(net, await readTls(net).catch(() => undefined)));
    }
    for (const [key, l] of this.#listeners) {
      if (wanted.has(key)) continue;
      this.#listeners.delete(key);
      // shutdown() lets requests on the old listener finish.
      void l.server.shutdown();
    }
    // HTTP/3 (issue 5): retired QUIC listeners send GOAWAY and drain.
    const wantedH3 = new Set<string>();
    for (const net of Object.values(config.network)) {
      const m = net.http3 ? await readHttp3Tls(net).catch(() => undefined) : undefined;
      if (m) wantedH3.add(http3ListenerKey(net, m));
    }
    for (const [key, l] of this.#h3Listeners) {
      if (wantedH3.has(key)) continue;
      this.#h3Listeners.delete(key);
      void l.server.shutdown(this.#drainMs);
    }
  }

  /**
   * Starts, moves or stops the management listener. The token is read again on every reload (a
   * rotated `token_file` takes effect); a token that cannot be read fails the start, and on a
   * reload keeps the previous one.
   */
  async #syncManagement(config: GatewayConfig): Promise<void> {
    const m = config.management;
    const baseDir = this.#baseDir();
    try {
      this.#managementToken = await resolveManagementToken({
        env: this.#env,
        tokenFile: m.token_file ? resolve(baseDir, m.token_file) : undefined,
        stateDir: resolve(baseDir, config.cloud.state_dir ?? "state"),
      });
    } catch (err) {
      if (!this.#managementToken) throw err;
      this.#logger.error("management token unchanged", { error: (err as Error).message });
    }
    this.#allowedHosts = m.allowed_hosts ?? [];
    const tls = m.tls_cert_path && m.tls_key_path
      ? {
        cert: await Deno.readTextFile(resolve(baseDir, m.tls_cert_path)),
        key: await Deno.readTextFile(resolve(baseDir, m.tls_key_path)),
      }
      : undefined;
    const key = m.enabled ? `${m.bind}:${m.port}:${m.tls_cert_path}:${m.tls_key_path}` : "";
    if (this.#management?.key === key) return;
    const old = this.#management;
    this.#management = undefined;
    if (old?.discovery) await removeIfExists(old.discovery);
    if (m.enabled) {
      // The same address cannot be bound twice without reusePort: close first in that case.
      if (old && old.server.addr.port === m.port) await old.server.shutdown();
      const app = createManagementApp(this, this.#logger.child({ component: "management" }), {
        token: () => this.#managementToken!.token,
        allowedHosts: () => this.#allowedHosts,
      });
      // Behind the slow-client guard like the data plane (shared/net), with its defaults.
      const server = guardedServe(
        { hostname: m.bind, port: m.port, tls, guard: DEFAULT_GUARD },
        (req, info) => app.fetch(req, info),
      );
      this.#management = { key, server };
      this.#management.discovery = await this.#writeDiscovery(m, server.addr.port, !!tls);
    }
    if (old && old.server.addr.port !== m.port) await old.server.shutdown();
  }

  /**
   * Tells local tools (gwcli) where the API and its token file are; skipped when the token comes
   * from the environment (there is no file to name) or there is no home directory.
   */
  async #writeDiscovery(
    m: GatewayConfig["management"],
    port: number,
    tls: boolean,
  ): Promise<string | undefined> {
    const file = this.#managementToken?.file;
    const path = discoveryPath(port, this.#env);
    if (!file || !path) return undefined;
    const host = isLoopbackAddress(m.bind) || m.bind === "0.0.0.0" || m.bind === "::"
      ? "127.0.0.1"
      : m.bind.includes(":")
      ? `[${m.bind}]`
      : m.bind;
    const record: ManagementDiscovery = {
      url: `${tls ? "https" : "http"}://${host}:${port}`,
      prefix: normalizePrefix(m.prefix) || "admin",
      token_file: file,
      pid: Deno.pid,
    };
    try {
      await writeFileAtomic(path, JSON.stringify(record, null, 2) + "\n", { mode: 0o600 });
      return path;
    } catch (err) {
      this.#logger.debug("no management discovery file", { error: (err as Error).message });
      return undefined;
    }
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

  async #handle(
    request: Request,
    info: Deno.ServeHandlerInfo<Deno.NetAddr>,
    tls: boolean,
    network: string,
    protocol: Protocol = "http",
  ): Promise<Response> {
    const rt = this.#current;
    rt.acquire();
    const requestId = requestIdOf(request.headers.get("x-request-id"));
    const url = requestTarget(request.url);
    try {
      const route = rt.routes.match(network, url.pathname);
      if (!route) {
        this.metrics.errorCode("no_route");
        request.body?.cancel().catch(() => {});
        const err = new GatewayError(404, "no_route", `no endpoint serves ${url.pathname}`);
        return new Response(errorBody(err, requestId), {
          status: 404,
          headers: { "content-type": "application/json", "x-request-id": requestId },
        });
      }
      const endpoint = route.endpoint;
      const pipeline = endpoint.pipeline.name;
      const record = new RequestRecord(rt.deps, pipeline, requestId);
      const ex = {
        request,
        url,
        requestId,
        record,
        protocol,
        scheme: tls ? "https" as const : "http" as const,
        remoteAddr: info.remoteAddr.hostname,
        backend: undefined as string | undefined,
      };
      const response = await endpoint.handle(ex, rt.deps);
      record.finished(response.status, "request", {
        method: request.method,
        // Patient identifiers (a FHIR id, a study UID) stay out of the log unless asked for.
        path: rt.config.logging.log_identifiers ? url.pathname : endpoint.loggedPath(url.pathname),
        pipeline,
        backend: ex.backend,
        status: response.status,
        error_code: record.errorCode,
      });
      return response;
    } finally {
      rt.release();
    }
  }

  #internalError(err: unknown): Response {
    this.#logger.error("unhandled error in the HTTP listener", { error: err as Error });
    this.metrics.errorCode("internal_error");
    const id = crypto.randomUUID();
    return new Response(
      errorBody(new GatewayError(500, "internal_error", "internal error"), id),
      { status: 500, headers: { "content-type": "application/json", "x-request-id": id } },
    );
  }
}

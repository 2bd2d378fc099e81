/**
 * Turns a validated GatewayConfig into a Runtime: middleware and backends built, pipelines
 * assembled, HTTP endpoints placed in the route table of each network. A Runtime serves requests
 * until a reload retires it; it closes itself once its in-flight requests are done.
 */
import { isolateRecorder, TrackingRecorder } from "../tracking/mod.ts";
import type { ConfigProblem, GatewayConfig } from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import { BACKEND_FACTORIES } from "../backends/mod.ts";
import { HTTP_ENDPOINT_FACTORIES, type HttpEndpoint } from "../endpoints/mod.ts";
// DICOM (issue 4): dicom_scp endpoints have their own DIMSE listeners, not HTTP routes.
import { createDicomScpEndpoint, type DicomScpEndpoint } from "../endpoints/dicom_scp/mod.ts";
// HL7 v2 (issue 37): hl7 endpoints have their own MLLP listeners.
import { createHl7Endpoint, type Hl7Endpoint } from "../endpoints/hl7/mod.ts";
import { MIDDLEWARE_FACTORIES, type TransformSource } from "../middleware/mod.ts";
import type { ComponentHealth, Metrics } from "../observability/mod.ts";
import { QueuedBackend, type QueueOpener } from "../delivery/mod.ts";
import { customBackendFactory, customMiddlewareFactory } from "./custom_types.ts";
import {
  type AuditSink,
  type Backend,
  type BuildContext,
  type BuiltPipeline,
  type ExecutorDeps,
  type Middleware,
  RouteTable,
} from "../pipeline/mod.ts";

/** One generation of the running configuration. */
export class Runtime {
  readonly generation: number;
  readonly config: GatewayConfig;
  readonly routes: RouteTable<HttpEndpoint>;
  readonly pipelines: Map<string, BuiltPipeline>;
  readonly deps: ExecutorDeps;
  /** DICOM (issue 4): dicom_scp endpoints by listener key (`bind_addr:port`). */
  readonly dimse = new Map<string, DicomScpEndpoint>();
  /** HL7 v2 (issue 37): hl7 endpoints by listener key (`bind_addr:port`). */
  readonly hl7 = new Map<string, Hl7Endpoint>();
  /** The backend named by `[audit] fhir_backend`, built whether or not a pipeline uses it. */
  auditBackend?: Backend;
  /** Memory the data-plane workers share with this runtime, by name (BuildDeps.sharedMemory). */
  sharedMemory: Map<string, SharedArrayBuffer> = new Map();
  /** Backends with a delivery queue, by name: what their queues deliver through. */
  readonly queued = new Map<string, Backend>();

  /** The backend (not its queueing face) a queue delivers through. */
  backend(name: string): Backend | undefined {
    return this.queued.get(name);
  }
  #inFlight = 0;
  #retired = false;
  #closed = false;

  constructor(
    generation: number,
    config: GatewayConfig,
    routes: RouteTable<HttpEndpoint>,
    pipelines: Map<string, BuiltPipeline>,
    deps: ExecutorDeps,
  ) {
    this.generation = generation;
    this.config = config;
    this.routes = routes;
    this.pipelines = pipelines;
    this.deps = deps;
  }

  /** A request starts on this runtime. */
  acquire(): void {
    this.#inFlight++;
  }

  /** A request finished; a retired runtime closes after its last one. */
  release(): void {
    this.#inFlight--;
    if (this.#retired && this.#inFlight === 0) void this.close();
  }

  /** Requests currently served by this runtime. */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Stop taking part in new requests; close once the in-flight ones are done. */
  retire(): void {
    this.#retired = true;
    if (this.#inFlight === 0) void this.close();
  }

  /** Close middleware and backends (health checks, watchers). */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const p of this.pipelines.values()) {
      for (const m of p.middleware) await m.close?.();
    }
    // Backends are shared by pipelines: close each once.
    const backends = new Set<Backend>();
    for (const p of this.pipelines.values()) for (const b of p.backends) backends.add(b);
    if (this.auditBackend) backends.add(this.auditBackend);
    for (const b of backends) await b.close();
  }
}

/** Dependencies of a build. */
export interface BuildDeps {
  logger: Logger;
  metrics: Metrics;
  baseDir: string;
  validateOnly?: boolean;
  /** Where transform specs come from (the cloud integration's downloading source, when active). */
  transformSource?: TransformSource;
  /** The audit trail the runtime's requests are recorded in. */
  audit?: AuditSink;
  /** The gateway's delivery queues (backends with `[backends.<name>.queue]`). */
  queues?: QueueOpener;
  /**
   * Memory shared with the data-plane workers by name (BuildContext.sharedMemory): the main
   * thread's build fills it, a worker's build is handed the main thread's.
   */
  sharedMemory?: Map<string, SharedArrayBuffer>;
  /** True in a data-plane worker: a name missing from `sharedMemory` is an error, not made. */
  sharedMemoryFixed?: boolean;
  /** The gateway's degraded components (BuildContext.health; the main thread's build only). */
  health?: ComponentHealth;
  /** The isolate's tracking writer (default: this isolate's own, gateway/tracking). */
  tracking?: TrackingRecorder;
}

/** Build a Runtime, or list every problem that prevents it (and release what was built). */
export async function buildRuntime(
  config: GatewayConfig,
  generation: number,
  deps: BuildDeps,
): Promise<{ runtime?: Runtime; problems: ConfigProblem[] }> {
  const file = config.source_files[0] ?? "<embedded>";
  const problems: ConfigProblem[] = [];
  const ctx: BuildContext = {
    config,
    logger: deps.logger,
    baseDir: deps.baseDir,
    validateOnly: deps.validateOnly,
    transformSource: deps.transformSource,
    metrics: deps.metrics,
    health: deps.health,
    dataPlaneWorker: deps.sharedMemoryFixed,
    sharedMemory: (name, bytes) => {
      const memory = deps.sharedMemory ?? (deps.sharedMemory = new Map());
      let buffer = memory.get(name);
      if (!buffer) {
        if (deps.sharedMemoryFixed) throw new Error(`no shared memory named ${name}`);
        buffer = new SharedArrayBuffer(bytes);
        memory.set(name, buffer);
      } else if (buffer.byteLength !== bytes) {
        throw new Error(`shared memory ${name} holds ${buffer.byteLength} bytes, not ${bytes}`);
      }
      return buffer;
    },
  };
  const middleware = new Map<string, Middleware>();
  const backends = new Map<string, Backend>();
  const queued = new Map<string, Backend>();
  const problem = (path: string, message: string) => problems.push({ file, path, message });

  for (const [name, mc] of Object.entries(config.middleware)) {
    const factory = MIDDLEWARE_FACTORIES[mc.type] ?? customMiddlewareFactory(mc.type);
    if (!factory) {
      problem(
        `middleware.${name}.type`,
        `middleware type \`${mc.type}\` is not available in this version of the gateway`,
      );
      continue;
    }
    try {
      middleware.set(name, await factory(mc, ctx));
    } catch (err) {
      problem(`middleware.${name}`, (err as Error).message);
    }
  }
  for (const [name, bc] of Object.entries(config.backends)) {
    const factory = BACKEND_FACTORIES[bc.service] ?? customBackendFactory(bc.service);
    if (!factory) {
      problem(
        `backends.${name}.service`,
        `backend service \`${bc.service}\` is not available in this version of the gateway`,
      );
      continue;
    }
    try {
      const backend = await factory(bc, ctx);
      if (bc.queue && deps.queues && !deps.validateOnly) {
        queued.set(name, backend);
        try {
          backends.set(name, new QueuedBackend(backend, await deps.queues.open(bc, deps.baseDir)));
        } catch (err) {
          await backend.close();
          throw new Error(`queue: ${(err as Error).message}`);
        }
      } else {
        backends.set(name, backend);
      }
    } catch (err) {
      problem(`backends.${name}`, (err as Error).message);
    }
  }

  const pipelines = new Map<string, BuiltPipeline>();
  const routes = new RouteTable<HttpEndpoint>();
  const dimse: DicomScpEndpoint[] = [];
  const hl7: Hl7Endpoint[] = [];
  const networks = Object.keys(config.network);
  for (const [name, pc] of Object.entries(config.pipelines)) {
    const pipeline: BuiltPipeline = {
      name,
      config: pc,
      middleware: pc.middleware.map((m) => middleware.get(m)).filter((m) => m !== undefined),
      backends: pc.backends.map((b) => backends.get(b)).filter((b) => b !== undefined),
    };
    pipelines.set(name, pipeline);
    for (const epName of pc.endpoints) {
      const ec = config.endpoints[epName];
      if (ec.service === "dicom_scp") {
        try {
          dimse.push(
            await createDicomScpEndpoint(ec, pipeline, config.dicom?.peers ?? {}, deps.baseDir),
          );
        } catch (err) {
          problem(`endpoints.${epName}`, (err as Error).message);
        }
        continue;
      }
      if (ec.service === "hl7") {
        try {
          hl7.push(await createHl7Endpoint(ec, pipeline, deps.baseDir));
        } catch (err) {
          problem(`endpoints.${epName}`, (err as Error).message);
        }
        continue;
      }
      const factory = HTTP_ENDPOINT_FACTORIES[ec.service];
      if (!factory) {
        problem(
          `endpoints.${epName}.service`,
          `endpoint service \`${ec.service}\` is not available in this version of the gateway`,
        );
        continue;
      }
      const endpoint = await factory(ec, pipeline, config.proxy.content_limits);
      for (const net of ec.networks.length ? ec.networks : networks) {
        routes.add(net, endpoint.prefix, endpoint);
      }
    }
  }

  // Message tracking: the isolate's writer takes this configuration's [tracking] (its key).
  let tracking: TrackingRecorder | undefined;
  if (!deps.validateOnly && (config.tracking || deps.tracking)) {
    tracking = deps.tracking ?? isolateRecorder(deps.logger, deps.metrics);
    try {
      await tracking.configure(config);
    } catch (err) {
      problem("tracking.identity_file", (err as Error).message);
    }
  }
  const runtime = new Runtime(generation, config, routes, pipelines, {
    logger: deps.logger,
    metrics: deps.metrics,
    audit: deps.audit,
    ...(config.tracking && tracking ? { tracking } : {}),
  });
  runtime.sharedMemory = deps.sharedMemory ?? new Map();
  if (config.audit?.fhir_backend) runtime.auditBackend = backends.get(config.audit.fhir_backend);
  for (const [name, b] of queued) runtime.queued.set(name, b);
  for (const ep of dimse) {
    runtime.dimse.set(ep.key, ep);
    ep.attach(runtime.deps, runtime);
  }
  for (const ep of hl7) {
    runtime.hl7.set(ep.key, ep);
    ep.attach(runtime.deps, runtime);
  }
  if (problems.length) {
    await runtime.close();
    // Middleware/backends not attached to any pipeline were built too: close them as well.
    for (const m of middleware.values()) await m.close?.();
    for (const b of backends.values()) await b.close();
    return { problems };
  }
  // Unattached middleware and backends are valid config but unused: release them now.
  const used = new Set<unknown>([runtime.auditBackend]);
  for (const p of pipelines.values()) {
    p.middleware.forEach((m) => used.add(m));
    p.backends.forEach((b) => used.add(b));
  }
  for (const m of middleware.values()) if (!used.has(m)) await m.close?.();
  for (const b of backends.values()) if (!used.has(b)) await b.close();
  return { runtime, problems };
}

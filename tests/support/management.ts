/**
 * Test helpers: a fake `GatewayControl` (the management API's only boundary) over a mutable
 * state, and a small valid `GatewayConfig`.
 */
import type { GatewayConfig } from "../../shared/gateway_config/mod.ts";
import { DEFAULT_CONTENT_LIMITS } from "../../shared/gateway_config/mod.ts";
import { Logger } from "../../shared/mod.ts";
import { createMetrics } from "../../gateway/observability/mod.ts";
import type {
  GatewayControl,
  PipelineInfo,
  ReloadOutcome,
  RouteInfo,
} from "../../gateway/management/control.ts";

/** A small config: one network with HTTP/3, one TLS network, management on 127.0.0.1:9090/admin. */
export function testConfig(): GatewayConfig {
  return {
    transforms_path: "transforms",
    cloud: { enabled: false },
    network: {
      main: {
        name: "main",
        bind: "0.0.0.0",
        port: 8080,
        http3: { bind: "0.0.0.0", port: 8443, cert_path: "c.pem", key_path: "k.pem" },
      },
      secure: {
        name: "secure",
        bind: "127.0.0.1",
        port: 8443,
        tls_cert_path: "c.pem",
        tls_key_path: "k.pem",
      },
    },
    endpoints: {},
    backends: {},
    targets: {},
    middleware: {},
    pipelines: {},
    proxy: { content_limits: { ...DEFAULT_CONTENT_LIMITS } },
    management: { enabled: true, bind: "127.0.0.1", port: 9090, prefix: "admin" },
    logging: { level: "info", format: "json" },
    source_files: ["/etc/gateway/gateway.toml"],
  };
}

/** Routes reported by the fake. */
export const TEST_ROUTES: RouteInfo[] = [{
  path: "/fhir",
  methods: ["*"],
  endpoint: "fhir_in",
  service: "fhir",
  pipeline: "fhir_proxy",
  networks: ["main"],
}];

/** Pipelines reported by the fake. */
export const TEST_PIPELINES: PipelineInfo[] = [{
  name: "fhir_proxy",
  endpoints: ["fhir_in"],
  middleware: [{ name: "to_r4", type: "transform" }],
  backends: [{
    name: "hapi",
    service: "fhir",
    targets: [{ name: "hapi1", url: "http://hapi:8080/fhir", healthy: true }],
  }],
}];

/** Mutable state behind the fake control. */
export interface FakeState {
  config: GatewayConfig;
  ready: boolean;
  generation: number;
  /** The config the next reload applies, or problems that make it fail. */
  next: GatewayConfig | { problems: NonNullable<ReloadOutcome["errors"]> };
  reloads: string[];
  /** When set, `routes()` throws it (to exercise the 500 path). */
  routesError?: unknown;
}

/** A fake GatewayControl and the state it reads. */
export function fakeControl(): { control: GatewayControl; state: FakeState } {
  const config = testConfig();
  const state: FakeState = { config, ready: true, generation: 1, next: config, reloads: [] };
  const metrics = createMetrics({ residentMemory: () => 4096 });
  const control: GatewayControl = {
    version: "9.9.9-test",
    startedAt: new Date(Date.now() - 90_500),
    configFile: "/etc/gateway/gateway.toml",
    metrics,
    config: () => state.config,
    generation: () => state.generation,
    routes: () => {
      if (state.routesError) throw state.routesError;
      return TEST_ROUTES;
    },
    pipelines: () => TEST_PIPELINES,
    ready: () => state.ready,
    reload: (trigger) => {
      state.reloads.push(trigger);
      const next = state.next;
      if ("problems" in next) {
        metrics.reload(false);
        return Promise.resolve({
          ok: false,
          generation: state.generation,
          duration_ms: 1.5,
          errors: next.problems,
        });
      }
      state.config = next;
      state.generation++;
      metrics.reload(true);
      return Promise.resolve({ ok: true, generation: state.generation, duration_ms: 2.25 });
    },
  };
  return { control, state };
}

/** A logger that keeps its JSON lines for assertions. */
export function memoryLogger(level: "info" | "debug" = "debug"): {
  logger: Logger;
  lines: Record<string, unknown>[];
} {
  const lines: Record<string, unknown>[] = [];
  const logger = new Logger({ level, format: "json", sink: (l) => lines.push(JSON.parse(l)) });
  return { logger, lines };
}

/** The bearer token of the test guard. */
export const TEST_TOKEN = "test-management-token-0123456789abcdef";

/** Guard settings with {@link TEST_TOKEN} and no extra host names. */
export const TEST_GUARD = { token: () => TEST_TOKEN, allowedHosts: () => [] as string[] };

/** A request to the app with the test token (and a JSON type for body-carrying methods). */
export function authed(url: string, init: RequestInit = {}): Request {
  const headers = new Headers(init.headers);
  if (!headers.has("authorization")) headers.set("authorization", `Bearer ${TEST_TOKEN}`);
  const method = (init.method ?? "GET").toUpperCase();
  if (method !== "GET" && method !== "HEAD" && !headers.has("content-type")) {
    headers.set("content-type", "application/json");
  }
  return new Request(url, { ...init, headers });
}

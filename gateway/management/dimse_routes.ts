/**
 * The DIMSE listeners of the running config as routes of `GET /{prefix}/routes`: one entry per
 * `dicom_scp` endpoint of a pipeline, at `dimse://bind:port`, with the enabled operations as its
 * methods and the association policy under `dimse`. A `dicom_scp` endpoint listens on its own TCP
 * socket, so it lists no networks. An endpoint in several pipelines is served by the last one, as
 * the runtime does.
 */
import type { GatewayConfig } from "../../shared/gateway_config/mod.ts";
import type { RouteInfo } from "./control.ts";
import { mllpRoutes } from "./mllp_routes.ts";

/** DIMSE services in the order they are reported, with their option and operation. */
const SERVICES = [
  ["echo", "enable_echo", "C-ECHO"],
  ["find", "enable_find", "C-FIND"],
  ["get", "enable_get", "C-GET"],
  ["move", "enable_move", "C-MOVE"],
  ["store", "enable_store", "C-STORE"],
] as const;

/** `dimse://host:port`, an IPv6 address in brackets. */
function listenerUrl(bind: string, port: number): string {
  return `dimse://${bind.includes(":") ? `[${bind}]` : bind}:${port}`;
}

/** The routes of the `dicom_scp` endpoints of `config`, sorted by path. */
export function dimseRoutes(config: GatewayConfig): RouteInfo[] {
  const byEndpoint = new Map<string, RouteInfo>();
  for (const [pipeline, pc] of Object.entries(config.pipelines)) {
    for (const name of pc.endpoints) {
      const ep = config.endpoints[name];
      if (ep?.service !== "dicom_scp") continue;
      const o = ep.options as Record<string, unknown>;
      const bind = String(o.bind_addr);
      const port = Number(o.port);
      const enabled = SERVICES.filter(([, option]) => o[option] === true);
      const allowed = o.allowed_calling_aets as string[] | undefined;
      byEndpoint.set(name, {
        path: listenerUrl(bind, port),
        methods: enabled.map(([, , op]) => op),
        endpoint: name,
        service: ep.service,
        pipeline,
        networks: [],
        served_by: "main_thread",
        workers: 1,
        dimse: {
          bind,
          port,
          local_aet: String(o.local_aet),
          services: enabled.map(([service]) => service),
          allowed_calling_aets: allowed?.length ? [...allowed] : null,
          storage_dir: typeof o.storage_dir === "string" ? o.storage_dir : null,
        },
      });
    }
  }
  return [...byEndpoint.values()].sort((a, b) => a.path.localeCompare(b.path));
}

/**
 * HTTP routes of the runtime followed by the DIMSE listeners and the MLLP listeners (each endpoint
 * listed once).
 */
export function allRoutes(http: RouteInfo[], config: GatewayConfig): RouteInfo[] {
  const listed = new Set(http.map((r) => r.endpoint));
  return [
    ...http,
    ...[...dimseRoutes(config), ...mllpRoutes(config)].filter((r) => !listed.has(r.endpoint)),
  ];
}

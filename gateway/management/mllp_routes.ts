/**
 * The MLLP listeners of the running config as routes of `GET /{prefix}/routes`: one entry per
 * `hl7` endpoint of a pipeline, at `mllp://bind:port` (`mllps://` over TLS), with the listener's
 * limits and acknowledgement policy under `mllp`. Like a DIMSE listener it has its own TCP socket,
 * in the main thread, so it lists no networks. An endpoint in several pipelines is served by the
 * last one, as the runtime does.
 */
import type { GatewayConfig } from "../../shared/gateway_config/mod.ts";
import type { RouteInfo } from "./control.ts";

/** `mllp://host:port` (`mllps://` with TLS), an IPv6 address in brackets. */
function listenerUrl(bind: string, port: number, tls: boolean): string {
  return `${tls ? "mllps" : "mllp"}://${bind.includes(":") ? `[${bind}]` : bind}:${port}`;
}

/** The routes of the `hl7` endpoints of `config`, sorted by path. */
export function mllpRoutes(config: GatewayConfig): RouteInfo[] {
  const byEndpoint = new Map<string, RouteInfo>();
  for (const [pipeline, pc] of Object.entries(config.pipelines)) {
    for (const name of pc.endpoints) {
      const ep = config.endpoints[name];
      if (ep?.service !== "hl7") continue;
      const o = ep.options as Record<string, unknown>;
      const bind = String(o.bind_addr);
      const port = Number(o.port);
      const tls = typeof o.tls_cert_path === "string";
      const facilities = o.allowed_sending_facilities as string[] | undefined;
      byEndpoint.set(name, {
        path: listenerUrl(bind, port, tls),
        methods: ["MLLP"],
        endpoint: name,
        service: ep.service,
        pipeline,
        networks: [],
        served_by: "main_thread",
        workers: 1,
        mllp: {
          bind,
          port,
          tls,
          client_certificates: typeof o.tls_client_ca_path === "string",
          ack_mode: String(o.ack_mode),
          max_message_bytes: Number(o.max_message_bytes),
          idle_timeout_secs: Number(o.idle_timeout_secs),
          max_connections: Number(o.max_connections),
          allowed_sending_facilities: facilities ? [...facilities] : null,
        },
      });
    }
  }
  return [...byEndpoint.values()].sort((a, b) => a.path.localeCompare(b.path));
}

/** The body of `GET /{prefix}/info`: what runs, since when, on which config and listeners. */
import { type CloudInfo, initialSyncStatus } from "../cloud_client/mod.ts";
import type { GatewayControl } from "./control.ts";
import { normalizePrefix } from "./routing.ts";

/** One data-plane listener of the running config. */
export interface ListenerInfo {
  network: string;
  bind: string;
  port: number;
  /** True when the listener has a certificate and key (HTTPS, HTTP/2 by ALPN). */
  tls: boolean;
  /** The HTTP/3 (QUIC) listener serving the same endpoints, or null. */
  http3: { bind: string; port: number } | null;
}

/** Instance information reported by the management API. */
export interface InstanceInfo {
  name: "gateway";
  version: string;
  pid: number;
  platform: { os: string; arch: string; deno: string };
  /** ISO 8601 start time. */
  started_at: string;
  uptime_seconds: number;
  /** Main config file, or null when running on the embedded default. */
  config_file: string | null;
  /** Generation of the running config, or null when the runtime does not report it. */
  config_generation: number | null;
  cloud_enabled: boolean;
  /** The cloud integration: settings, machine token (never the token itself), sync. */
  cloud: CloudInfo;
  listeners: ListenerInfo[];
  management: { bind: string; port: number; prefix: string };
}

/** Build the instance information from the running gateway. */
export function instanceInfo(control: GatewayControl, now: Date = new Date()): InstanceInfo {
  const config = control.config();
  const listeners = Object.entries(config.network).map(([name, net]): ListenerInfo => ({
    network: net.name ?? name,
    bind: net.bind,
    port: net.port,
    tls: Boolean(net.tls_cert_path && net.tls_key_path),
    http3: net.http3 ? { bind: net.http3.bind, port: net.http3.port } : null,
  }));
  return {
    name: "gateway",
    version: control.version,
    pid: Deno.pid,
    platform: { os: Deno.build.os, arch: Deno.build.arch, deno: Deno.version.deno },
    started_at: control.startedAt.toISOString(),
    uptime_seconds: Math.max(0, Math.floor((now.getTime() - control.startedAt.getTime()) / 1000)),
    config_file: control.configFile,
    config_generation: control.generation?.() ?? null,
    cloud_enabled: config.cloud?.enabled === true,
    cloud: control.cloud?.info() ??
      disabledCloud(config.cloud?.enabled === true, config.cloud?.url),
    listeners,
    management: {
      bind: config.management.bind,
      port: config.management.port,
      prefix: normalizePrefix(config.management.prefix),
    },
  };
}

/** The `cloud` object when the runtime has no cloud integration (tests of the API alone). */
function disabledCloud(enabled: boolean, url: string | undefined): CloudInfo {
  return {
    enabled,
    url: url ?? null,
    gateway_code: "",
    gateway_id: null,
    authorized: false,
    verified: false,
    token_source: null,
    token_expires_at: null,
    token_renews_at: null,
    persisted: false,
    encryption_key: false,
    state_dir: null,
    sync: initialSyncStatus(),
  };
}

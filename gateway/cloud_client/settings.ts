/** The `[cloud]` table of a running configuration, resolved: URL normalized, defaults applied. */
import type { CloudPin } from "./pin.ts";
import { resolve } from "node:path";
import type { GatewayConfig } from "../../shared/gateway_config/mod.ts";
import { GATEWAY_CODE_PATTERN } from "../../shared/mod.ts";

/** Default seconds between status reports. */
export const DEFAULT_STATUS_INTERVAL_SECS = 60;

/** The cloud settings the integration acts on. */
export interface CloudSettings {
  enabled: boolean;
  /** Base URL without a trailing slash; also the pinned issuer of every token. Null when unset. */
  url: string | null;
  /** Gateway code used to authorize. */
  gatewayCode: string;
  /** True when `[cloud] gateway_code` is set (then tokens for other codes are refused). */
  codeConfigured: boolean;
  /** Absolute state directory. */
  stateDir: string;
  statusIntervalMs: number;
  /** Renew this long before expiry (`[cloud] renew_before_days`); default: a third of the life. */
  renewBeforeMs?: number;
  /** The identity tokens must match (pin.ts); set by the integration from the state directory. */
  pin?: CloudPin;
}

/** The cloud's issuer form of a URL: `new URL(url).href` without trailing slashes. */
export function normalizeCloudUrl(url: string): string {
  return new URL(url).href.replace(/\/+$/, "");
}

/** A gateway code made from a host name: other characters become `-`, at most 64. */
export function hostGatewayCode(hostname: string): string {
  const code = hostname.replace(/[^A-Za-z0-9._-]/g, "-").replace(/^[^A-Za-z0-9]+/, "").slice(0, 64);
  return GATEWAY_CODE_PATTERN.test(code) ? code : "gateway";
}

function hostname(): string {
  try {
    return Deno.hostname();
  } catch {
    return "gateway";
  }
}

/** Settings of `config`; `baseDir` resolves a relative `state_dir` (the loader already did). */
export function cloudSettings(config: GatewayConfig, baseDir: string): CloudSettings {
  const c = config.cloud;
  return {
    enabled: c.enabled === true,
    url: c.url ? normalizeCloudUrl(c.url) : null,
    gatewayCode: c.gateway_code ?? hostGatewayCode(hostname()),
    codeConfigured: c.gateway_code !== undefined,
    stateDir: resolve(baseDir, c.state_dir ?? "state"),
    statusIntervalMs: (c.status_interval_secs ?? DEFAULT_STATUS_INTERVAL_SECS) * 1000,
    renewBeforeMs: c.renew_before_days === undefined
      ? undefined
      : c.renew_before_days * 24 * 60 * 60 * 1000,
  };
}

/** True when the two settings need a fresh token store and sync (not just new timings). */
export function identityChanged(a: CloudSettings | undefined, b: CloudSettings): boolean {
  return !a || a.enabled !== b.enabled || a.url !== b.url || a.stateDir !== b.stateDir ||
    a.gatewayCode !== b.gatewayCode || a.codeConfigured !== b.codeConfigured;
}

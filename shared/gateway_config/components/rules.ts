/**
 * Cross-key rules several component types share.
 */
import type { RuleProblem } from "../component_type.ts";

/** Reports `key` when set and `condition` is false. */
export function onlyWhen(
  options: Record<string, unknown>,
  keys: string[],
  condition: boolean,
  why: string,
): RuleProblem[] {
  if (condition) return [];
  return keys.filter((k) => options[k] !== undefined).map((key) => ({ key, message: why }));
}

/** Both keys set or neither. */
export function bothOrNeither(
  options: Record<string, unknown>,
  a: string,
  b: string,
): RuleProblem[] {
  const hasA = options[a] !== undefined;
  const hasB = options[b] !== undefined;
  if (hasA === hasB) return [];
  const missing = hasA ? b : a;
  return [{ key: missing, message: `missing \`${missing}\`: set both ${a} and ${b}, or neither` }];
}

/** True for an address only this machine can reach: 127.0.0.0/8, ::1 or `localhost`. */
export function isLoopbackBind(address: string): boolean {
  const a = address.startsWith("[") && address.endsWith("]") ? address.slice(1, -1) : address;
  return a === "localhost" || a === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(a);
}

/**
 * A TCP listener that no transport authenticates (MLLP, DIMSE) must not be reachable from the
 * network by accident: bound beyond loopback, it needs client certificates
 * (`tls_client_ca_path`), a source address allow-list (`allowed_source_addresses`), or the
 * operator's explicit `allow_unauthenticated = true`. Reported on `bind_addr`.
 */
export function networkListenerAuthenticates(
  options: Record<string, unknown>,
  service: string,
): RuleProblem[] {
  const bind = String(options.bind_addr ?? "");
  if (isLoopbackBind(bind)) return [];
  if (options.tls_client_ca_path !== undefined) return [];
  const allowList = options.allowed_source_addresses;
  if (Array.isArray(allowList) && allowList.length > 0) return [];
  if (options.allow_unauthenticated === true) return [];
  return [{
    key: "bind_addr",
    message: `the ${service} listener on ${bind} is reachable from the network and nothing ` +
      "authenticates its peers: set tls_client_ca_path (client certificates over TLS), " +
      "allowed_source_addresses (the senders' addresses or CIDR ranges), or " +
      'allow_unauthenticated = true to accept any peer that can connect; or bind "127.0.0.1"',
  }];
}

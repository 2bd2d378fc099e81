/**
 * Where a running gateway tells local tools (gwcli) how to reach its management API: one JSON
 * file per management port in a per-user directory, like Jupyter's runtime files. It names the
 * token file rather than holding the token, and is written 0600 in a 0700 directory.
 *
 * @example
 * ```ts
 * import { discoveryPath } from "./management_discovery.ts";
 * const path = discoveryPath(9090, (name) => ({ HOME: "/home/ada" } as Record<string, string>)[name]);
 * // "/home/ada/.local/state/healthcare-gateway/management/9090.json"
 * ```
 */

/** What a discovery file holds. */
export interface ManagementDiscovery {
  /** Base URL of the management API (`http://127.0.0.1:9090`). */
  url: string;
  /** Route prefix (`admin`). */
  prefix: string;
  /** File holding the bearer token. */
  token_file: string;
  /** Process id of the gateway that wrote it. */
  pid: number;
}

/** The directory of discovery files: `$XDG_STATE_HOME/healthcare-gateway/management`. */
export function discoveryDir(env: (name: string) => string | undefined): string | undefined {
  const state = env("XDG_STATE_HOME") || (env("HOME") ? `${env("HOME")}/.local/state` : "");
  return state ? `${state}/healthcare-gateway/management` : undefined;
}

/** The discovery file of the management API on `port`, or undefined without a home. */
export function discoveryPath(
  port: number,
  env: (name: string) => string | undefined,
): string | undefined {
  const dir = discoveryDir(env);
  return dir ? `${dir}/${port}.json` : undefined;
}

/** Parses a discovery file's text; undefined when it is not one. */
export function parseDiscovery(text: string): ManagementDiscovery | undefined {
  try {
    const o = JSON.parse(text);
    if (
      typeof o?.url === "string" && typeof o?.prefix === "string" &&
      typeof o?.token_file === "string" && typeof o?.pid === "number"
    ) {
      return { url: o.url, prefix: o.prefix, token_file: o.token_file, pid: o.pid };
    }
  } catch {
    // not ours
  }
  return undefined;
}

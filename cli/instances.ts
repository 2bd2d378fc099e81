/**
 * The registry of gateway instances (`instances.json`): short id, gateway id (once authorized),
 * label, ip, port and management path prefix of every gateway gwcli talks to.
 */
import { CliError, usageError } from "./errors.ts";
import { readTextIfExists, writeFileAtomic } from "./files.ts";

/** A registered gateway instance. */
export interface Instance {
  /** Short id chosen by gwcli (6 hex characters). */
  id: string;
  /** Gateway id (UUID) in the cloud service, stored by `gateway:authorize`; null before. */
  gateway_id: string | null;
  /** Unique label (default `ip:port`). */
  label: string;
  /** Address (IPv4, IPv6 or host name) of the management API. */
  ip: string;
  /** Port of the management API. */
  port: number;
  /** Management path prefix, without slashes (`admin`). */
  prefix: string;
  /** File holding the management token (`gateway:add --token-file`); absent: discovered. */
  token_file?: string;
  /** The management API speaks HTTPS (`gateway:add --https`). */
  https?: boolean;
}

/** What `gateway:add` registers. */
export interface NewInstance {
  ip: string;
  port: number;
  label?: string;
  prefix: string;
  token_file?: string;
  https?: boolean;
}

/** How a command picks instances: by id, by label, or by ip and port. */
export interface InstanceSelector {
  id?: string;
  label?: string;
  ip?: string;
  port?: number;
}

/** Default address of `gateway:add`. */
export const DEFAULT_IP = "127.0.0.1";
/** Default management port of `gateway:add` (SPEC; the gateway itself defaults to 9090). */
export const DEFAULT_PORT = 8081;
/** Default management path prefix of `gateway:add`. */
export const DEFAULT_PREFIX = "admin";

const HOST_NAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** True when `text` is an IPv6 address (brackets allowed). */
function isIpv6(text: string): boolean {
  const bare = text.replace(/^\[|\]$/g, "");
  if (!bare.includes(":")) return false;
  try {
    new URL(`http://[${bare}]/`);
    return true;
  } catch {
    return false;
  }
}

/** Checks an address: IPv4, IPv6 (stored without brackets) or a host name. */
export function parseIp(text: string): string {
  const value = text.trim();
  if (IPV4.test(value)) return value;
  if (isIpv6(value)) return value.replace(/^\[|\]$/g, "");
  if (/^\d+(\.\d+)*$/.test(value) || !HOST_NAME.test(value)) {
    throw usageError(`invalid address ${JSON.stringify(text)}: use an IPv4, IPv6 or host name`);
  }
  return value;
}

/** Checks a TCP port (1-65535). */
export function parsePort(text: string): number {
  const value = text.trim();
  const port = /^\d+$/.test(value) ? Number(value) : NaN;
  if (!Number.isInteger(port) || port < 1 || port > 65535) {
    throw usageError(`invalid port ${JSON.stringify(text)}: use a number from 1 to 65535`);
  }
  return port;
}

/** `/admin/` -> `admin`, `gw//admin` -> `gw/admin`; refuses empty and unsafe prefixes. */
export function normalizePrefix(text: string): string {
  const prefix = text.trim().split("/").filter((s) => s !== "").join("/");
  if (prefix === "" || !/^[A-Za-z0-9._~-]+(\/[A-Za-z0-9._~-]+)*$/.test(prefix)) {
    throw usageError(
      `invalid path prefix ${
        JSON.stringify(text)
      }: use path segments of letters, digits, '.', '_', '~' or '-'`,
    );
  }
  if (prefix.split("/").some((s) => s === "." || s === "..")) {
    throw usageError(`invalid path prefix ${JSON.stringify(text)}: no '.' or '..' segments`);
  }
  return prefix;
}

/** Checks a label: 1-100 printable characters. */
export function parseLabel(text: string): string {
  const label = text.trim();
  const control = [...label].some((ch) => ch.charCodeAt(0) < 0x20 || ch.charCodeAt(0) === 0x7f);
  if (label === "" || label.length > 100 || control) {
    throw usageError(`invalid label ${JSON.stringify(text)}: use 1-100 printable characters`);
  }
  return label;
}

/** `host:port` with brackets around IPv6 addresses. */
export function hostPort(ip: string, port: number): string {
  return `${ip.includes(":") ? `[${ip}]` : ip}:${port}`;
}

/** Base URL of an instance's management listener: `http://ip:port`. */
export function instanceOrigin(instance: Pick<Instance, "ip" | "port" | "https">): string {
  return `${instance.https ? "https" : "http"}://${hostPort(instance.ip, instance.port)}`;
}

/** URL of a management route under the instance's prefix: `http://ip:port/<prefix>/<route>`. */
export function prefixedUrl(instance: Instance, route: string): string {
  return `${managementBase(instance)}/${route}`;
}

/** The management prefix URL of an instance: `http://ip:port/<prefix>`. */
export function managementBase(instance: Instance): string {
  return `${instanceOrigin(instance)}/${instance.prefix}`;
}

/** A readable name: `'label' (id)`. */
export function describeInstance(instance: Instance): string {
  return `'${instance.label}' (${instance.id})`;
}

function checkInstance(value: unknown, path: string): Instance {
  const o = value as Record<string, unknown>;
  const ok = typeof o === "object" && o !== null && typeof o.id === "string" &&
    typeof o.label === "string" && typeof o.ip === "string" && typeof o.port === "number" &&
    typeof o.prefix === "string" && (o.gateway_id === null || typeof o.gateway_id === "string" ||
      o.gateway_id === undefined);
  if (!ok) throw new CliError(`${path} has a malformed instance entry: ${JSON.stringify(value)}`);
  return {
    id: o.id as string,
    gateway_id: (o.gateway_id as string | null | undefined) ?? null,
    label: o.label as string,
    ip: o.ip as string,
    port: o.port as number,
    prefix: o.prefix as string,
    ...(typeof o.token_file === "string" ? { token_file: o.token_file } : {}),
    ...(o.https === true ? { https: true } : {}),
  };
}

/** Reads the registry; missing means empty. */
export async function loadInstances(path: string): Promise<Instance[]> {
  const text = await readTextIfExists(path);
  if (text === undefined || text.trim() === "") return [];
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new CliError(`${path} is not valid JSON`);
  }
  const list = (raw as { instances?: unknown })?.instances;
  if (!Array.isArray(list)) throw new CliError(`${path} must hold {"instances": [...]}`);
  return list.map((entry) => checkInstance(entry, path));
}

/** Writes the registry atomically (0600). */
export async function saveInstances(path: string, instances: Instance[]): Promise<void> {
  await writeFileAtomic(path, JSON.stringify({ version: 1, instances }, null, 2) + "\n");
}

/** A short id that no instance in `taken` has. */
export function newInstanceId(taken: Iterable<string>): string {
  const used = new Set(taken);
  for (;;) {
    const bytes = crypto.getRandomValues(new Uint8Array(3));
    const id = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    if (!used.has(id)) return id;
  }
}

/** Adds an instance to `list` (returns the new list and the instance); labels and ip:port are unique. */
export function addInstance(
  list: readonly Instance[],
  input: NewInstance,
): { instances: Instance[]; added: Instance } {
  const label = input.label ?? hostPort(input.ip, input.port);
  const sameLabel = list.find((i) => i.label === label);
  if (sameLabel) {
    throw new CliError(`an instance is already labelled '${label}' (id ${sameLabel.id})`, {
      hint: "Choose another label with -l, or remove it first: gwcli gateway:remove --id " +
        sameLabel.id,
    });
  }
  const sameAddress = list.find((i) => i.ip === input.ip && i.port === input.port);
  if (sameAddress) {
    throw new CliError(
      `${hostPort(input.ip, input.port)} is already registered as ${describeInstance(sameAddress)}`,
      { hint: `Remove it first: gwcli gateway:remove --id ${sameAddress.id}` },
    );
  }
  const added: Instance = {
    id: newInstanceId(list.map((i) => i.id)),
    gateway_id: null,
    label,
    ip: input.ip,
    port: input.port,
    prefix: input.prefix,
    ...(input.token_file ? { token_file: input.token_file } : {}),
    ...(input.https ? { https: true } : {}),
  };
  return { instances: [...list, added], added };
}

/**
 * The one instance that `selector` (id or label) names. With neither, the only registered
 * instance; with none or several registered, a usage error.
 */
export function findInstance(list: readonly Instance[], selector: InstanceSelector): Instance {
  if (selector.id !== undefined) {
    const found = list.find((i) => i.id === selector.id);
    if (!found) throw unknown(`no instance has id '${selector.id}'`);
    return found;
  }
  if (selector.label !== undefined) {
    const found = list.find((i) => i.label === selector.label);
    if (!found) throw unknown(`no instance is labelled '${selector.label}'`);
    return found;
  }
  if (list.length === 1) return list[0];
  if (list.length === 0) {
    throw new CliError("no gateway instance is registered", {
      hint: "Register one first: gwcli gateway:add -i IP -p PORT",
    });
  }
  throw usageError(
    `${list.length} instances are registered: choose one with --id or -l/--label`,
    "See them with: gwcli gateway:list",
  );
}

function unknown(message: string): CliError {
  return new CliError(message, { hint: "See the registered instances with: gwcli gateway:list" });
}

/** The instances that `selector` (id, label, or ip and port) names; at least one or an error. */
export function matchInstances(list: readonly Instance[], selector: InstanceSelector): Instance[] {
  if (selector.id !== undefined || selector.label !== undefined) {
    return [findInstance(list, selector)];
  }
  if (selector.ip !== undefined && selector.port !== undefined) {
    const found = list.filter((i) => i.ip === selector.ip && i.port === selector.port);
    if (found.length === 0) {
      throw unknown(`no instance is registered at ${hostPort(selector.ip, selector.port)}`);
    }
    return found;
  }
  throw usageError("choose the instance with --id, -l/--label, or -i/--ip with -p/--port");
}

/** `list` with `instance` replaced (matched by id). */
export function replaceInstance(list: readonly Instance[], instance: Instance): Instance[] {
  return list.map((i) => (i.id === instance.id ? instance : i));
}

/**
 * Checks across tables: every name a table refers to exists, an endpoint feeds one pipeline,
 * HTTP routes are unambiguous and no two listeners claim the same address. Runs on a possibly
 * partial config (entries with problems keep what was valid), so every field may be missing.
 */
import { childPath, type ProblemSink } from "./fields.ts";
import { HTTP_FAMILY_ENDPOINTS } from "./components/mod.ts";
import { didYouMean } from "./suggest.ts";
import type { GatewayConfig } from "./types.ts";

/** Reports every dangling reference and conflict of `config`. */
export function checkReferences(sink: ProblemSink, config: GatewayConfig): void {
  checkEndpointNetworks(sink, config);
  checkBackendTargets(sink, config);
  checkPipelines(sink, config);
  checkRoutes(sink, config);
  checkListeners(sink, config);
  checkAudit(sink, config);
}

/** `[audit] fhir_backend` names a backend that speaks FHIR over HTTP. */
function checkAudit(sink: ProblemSink, config: GatewayConfig): void {
  const name = config.audit?.fhir_backend;
  if (name === undefined) return;
  const backend = Object.hasOwn(config.backends, name) ? config.backends[name] : undefined;
  if (!backend) {
    sink.report("audit.fhir_backend", unknownName("backend", name, config.backends));
  } else if (backend.service !== "fhir" && backend.service !== "http") {
    sink.report(
      "audit.fhir_backend",
      `backend \`${name}\` has service ${backend.service}; AuditEvents go to a fhir or http backend`,
    );
  }
}

function unknownName(kind: string, name: string, defined: Record<string, unknown>): string {
  const names = Object.keys(defined);
  const hint = didYouMean(name, names) ||
    (names.length ? `; defined: ${names.join(", ")}` : `; no ${kind} is defined`);
  return `unknown ${kind} \`${name}\`${hint}`;
}

/** Reports names not in `defined` and names listed twice. */
function checkNameList(
  sink: ProblemSink,
  list: string[] | undefined,
  path: string,
  kind: string,
  defined: Record<string, unknown>,
): void {
  const seen = new Set<string>();
  (list ?? []).forEach((name, i) => {
    const at = childPath(path, i);
    if (seen.has(name)) sink.report(at, `${kind} \`${name}\` is listed twice`);
    else if (!Object.hasOwn(defined, name)) sink.report(at, unknownName(kind, name, defined));
    seen.add(name);
  });
}

/** Endpoint services with their own TCP listener (`bind_addr`, `port`) instead of networks. */
const OWN_LISTENER_ENDPOINTS: ReadonlySet<string> = new Set(["dicom_scp", "hl7"]);

function isHttpFamily(service: string | undefined): boolean {
  return HTTP_FAMILY_ENDPOINTS.some((s) => s === service);
}

function checkEndpointNetworks(sink: ProblemSink, config: GatewayConfig): void {
  const noNetworks = Object.keys(config.network).length === 0;
  for (const ep of Object.values(config.endpoints)) {
    const path = childPath("endpoints", ep.name);
    if (OWN_LISTENER_ENDPOINTS.has(ep.service) && ep.networks?.length) {
      sink.report(
        childPath(path, "networks"),
        `${ep.service} endpoints listen on their own bind_addr and port; remove networks`,
      );
      continue;
    }
    checkNameList(sink, ep.networks, childPath(path, "networks"), "network", config.network);
    if (isHttpFamily(ep.service) && noNetworks) {
      sink.report(path, "no network serves this endpoint: the network table defines none");
    }
  }
}

function checkBackendTargets(sink: ProblemSink, config: GatewayConfig): void {
  for (const b of Object.values(config.backends)) {
    checkNameList(
      sink,
      b.targets,
      childPath(childPath("backends", b.name), "targets"),
      "target",
      config.targets,
    );
  }
}

function checkPipelines(sink: ProblemSink, config: GatewayConfig): void {
  const owner = new Map<string, string>();
  for (const p of Object.values(config.pipelines)) {
    const path = childPath("pipelines", p.name);
    checkNameList(sink, p.endpoints, childPath(path, "endpoints"), "endpoint", config.endpoints);
    checkNameList(
      sink,
      p.middleware,
      childPath(path, "middleware"),
      "middleware",
      config.middleware,
    );
    checkNameList(sink, p.backends, childPath(path, "backends"), "backend", config.backends);
    (p.endpoints ?? []).forEach((name, i) => {
      const first = owner.get(name);
      if (first !== undefined && first !== p.name) {
        sink.report(
          childPath(childPath(path, "endpoints"), i),
          `endpoint \`${name}\` is already used by pipeline \`${first}\`; an endpoint feeds one pipeline`,
        );
      } else owner.set(name, p.name);
    });
  }
}

/** Networks an endpoint is served on (an empty list means all). */
function servedOn(networks: string[] | undefined, all: string[]): string[] {
  return networks?.length ? networks : all;
}

function checkRoutes(sink: ProblemSink, config: GatewayConfig): void {
  const all = Object.keys(config.network);
  const seen: { name: string; prefix: string; networks: string[] }[] = [];
  for (const ep of Object.values(config.endpoints)) {
    const prefix = ep.options?.path_prefix;
    if (!isHttpFamily(ep.service) || typeof prefix !== "string") continue;
    const networks = servedOn(ep.networks, all);
    for (const other of seen) {
      const shared = networks.find((n) => other.prefix === prefix && other.networks.includes(n));
      if (shared === undefined) continue;
      sink.report(
        childPath(childPath(childPath("endpoints", ep.name), "options"), "path_prefix"),
        `path_prefix "${prefix}" is also served by endpoint \`${other.name}\` on network \`${shared}\``,
      );
      break;
    }
    seen.push({ name: ep.name, prefix, networks });
  }
}

interface Listener {
  what: string;
  path: string;
  bind: string;
  port: number;
}

const WILDCARDS = new Set(["0.0.0.0", "::", "[::]", ""]);

/** Two sockets collide when the ports match and either binds every address or both bind the same. */
function collides(a: Listener, b: Listener): boolean {
  return a.port === b.port && (a.bind === b.bind || WILDCARDS.has(a.bind) || WILDCARDS.has(b.bind));
}

function reportCollisions(sink: ProblemSink, listeners: Listener[], protocol: string): void {
  listeners.forEach((l, i) => {
    const earlier = listeners.slice(0, i).find((o) => collides(o, l));
    if (!earlier) return;
    // Blame the port the user wrote, so the message points at a line they can change.
    const [blamed, other] = !sink.written(l.path) && sink.written(earlier.path)
      ? [earlier, l]
      : [l, earlier];
    sink.report(
      blamed.path,
      `${blamed.what} listens on ${blamed.bind}:${blamed.port} (${protocol}), which ${other.what} also uses (${other.bind}:${other.port})`,
    );
  });
}

function checkListeners(sink: ProblemSink, config: GatewayConfig): void {
  const tcp: Listener[] = [];
  const udp: Listener[] = [];
  const usable = (l: Partial<Listener>): l is Listener =>
    typeof l.bind === "string" && typeof l.port === "number";
  for (const net of Object.values(config.network)) {
    const path = childPath("network", net.name);
    const l = {
      what: `network \`${net.name}\``,
      path: childPath(path, "port"),
      bind: net.bind,
      port: net.port,
    };
    if (usable(l)) tcp.push(l);
    const h3 = net.http3;
    const q = {
      what: `the http3 listener of network \`${net.name}\``,
      path: childPath(childPath(path, "http3"), "port"),
      bind: h3?.bind,
      port: h3?.port,
    };
    if (h3 && usable(q)) udp.push(q);
  }
  const m = config.management;
  const mgmt = { what: "the management API", path: "management.port", bind: m.bind, port: m.port };
  if (m.enabled && usable(mgmt)) tcp.push(mgmt);
  for (const ep of Object.values(config.endpoints)) {
    if (!OWN_LISTENER_ENDPOINTS.has(ep.service)) continue;
    const l = {
      what: `${ep.service} endpoint \`${ep.name}\``,
      path: childPath(childPath(childPath("endpoints", ep.name), "options"), "port"),
      bind: ep.options?.bind_addr as string,
      port: ep.options?.port as number,
    };
    if (usable(l)) tcp.push(l);
  }
  reportCollisions(sink, tcp, "TCP");
  reportCollisions(sink, udp, "UDP");
}

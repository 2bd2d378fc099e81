/**
 * Visits every key of a raw (parsed, not yet validated) configuration document that the schema
 * describes, with its field spec: the one place that knows which table of the file is described
 * by which spec. Used to find path-valued keys (`FieldSpec.path`) and credentials
 * (`FieldSpec.secret`) wherever they sit, including inside service options.
 *
 * @example
 * ```ts
 * import { visitFields } from "./field_walk.ts";
 * const secrets: string[] = [];
 * visitFields({ backends: { s3: { service: "storage", options: { secret_access_key: "x" } } } },
 *   (f) => { if (f.spec.secret) secrets.push(f.path); });
 * // secrets: ["backends.s3.options.secret_access_key"]
 * ```
 */
import { childPath, type FieldSpec, isTable, type TableSpec } from "./fields.ts";
import {
  AUDIT,
  BACKEND,
  CLOUD,
  CONTENT_LIMITS,
  DICOM_PEER,
  ENDPOINT,
  HEALTH_CHECK,
  HTTP3_LISTENER,
  LOGGING,
  MANAGEMENT,
  MIDDLEWARE,
  NETWORK,
  PIPELINE,
  QUEUE,
  RUNTIME,
  TARGET,
  TOP_LEVEL,
} from "./schema.ts";
import { z } from "zod";
import { BACKEND_AUTH } from "./backend_auth.ts";
import { ENDPOINT_OPTION_SCHEMAS } from "./service_options.ts";
import { backendOptionSchema, middlewareOptionSchema } from "./custom_types.ts";

/** One described key and where it is. */
export interface FieldVisit {
  /** Dotted path, e.g. `backends.archive.options.root`. */
  path: string;
  /** The key in its table. */
  key: string;
  /** The table holding it (to read or replace the value). */
  holder: Record<string, unknown>;
  spec: FieldSpec;
  value: unknown;
}

function table(
  holder: unknown,
  spec: TableSpec | undefined,
  path: string,
  visit: (f: FieldVisit) => void,
): void {
  if (!spec || !isTable(holder)) return;
  for (const [key, value] of Object.entries(holder)) {
    const f = Object.hasOwn(spec, key) ? spec[key] : undefined;
    if (f) visit({ path: childPath(path, key), key, holder, spec: f, value });
  }
}

/** A credential-valued entry of a table of strings (the `headers` of a backend's `auth`). */
const HEADER_VALUE: FieldSpec = {
  schema: z.string(),
  type: "string",
  doc: "a header value",
  secret: true,
};

/** Visits every key of `holder` with the same spec. */
function each(
  holder: unknown,
  spec: FieldSpec,
  path: string,
  visit: (f: FieldVisit) => void,
): void {
  if (!isTable(holder)) return;
  for (const [key, value] of Object.entries(holder)) {
    visit({ path: childPath(path, key), key, holder, spec, value });
  }
}

function named(
  section: unknown,
  path: string,
  each: (entry: Record<string, unknown>, path: string) => void,
): void {
  if (!isTable(section)) return;
  for (const [name, entry] of Object.entries(section)) {
    if (isTable(entry)) each(entry, childPath(path, name));
  }
}

const optionsOf = (
  schemas: Record<string, { fields?: TableSpec }>,
  kind: unknown,
): TableSpec | undefined =>
  typeof kind === "string" && Object.hasOwn(schemas, kind) ? schemas[kind].fields : undefined;

/** Calls `visit` for every key of `doc` that the schema describes. */
export function visitFields(doc: Record<string, unknown>, visit: (f: FieldVisit) => void): void {
  table(doc, TOP_LEVEL, "", visit);
  table(doc.cloud, CLOUD, "cloud", visit);
  table(doc.management, MANAGEMENT, "management", visit);
  table(doc.logging, LOGGING, "logging", visit);
  table(doc.audit, AUDIT, "audit", visit);
  table(doc.runtime, RUNTIME, "runtime", visit);
  if (isTable(doc.proxy)) {
    table(doc.proxy.content_limits, CONTENT_LIMITS, "proxy.content_limits", visit);
  }
  named(doc.network, "network", (n, p) => {
    table(n, NETWORK, p, visit);
    table(n.http3, HTTP3_LISTENER, childPath(p, "http3"), visit);
  });
  named(doc.endpoints, "endpoints", (e, p) => {
    table(e, ENDPOINT, p, visit);
    table(e.options, optionsOf(ENDPOINT_OPTION_SCHEMAS, e.service), childPath(p, "options"), visit);
  });
  named(doc.backends, "backends", (b, p) => {
    table(b, BACKEND, p, visit);
    const options = backendOptionSchema(b.service)?.fields;
    table(b.options, options, childPath(p, "options"), visit);
    table(b.health_check, HEALTH_CHECK, childPath(p, "health_check"), visit);
    table(b.queue, QUEUE, childPath(p, "queue"), visit);
    if (options?.auth && isTable(b.options) && isTable(b.options.auth)) {
      const at = childPath(childPath(p, "options"), "auth");
      table(b.options.auth, BACKEND_AUTH, at, visit);
      // Every static header value is treated as a credential.
      each(b.options.auth.headers, HEADER_VALUE, childPath(at, "headers"), visit);
    }
  });
  named(doc.targets, "targets", (t, p) => table(t, TARGET, p, visit));
  named(doc.middleware, "middleware", (m, p) => {
    table(m, MIDDLEWARE, p, visit);
    table(m.options, middlewareOptionSchema(m.type)?.fields, childPath(p, "options"), visit);
  });
  named(doc.pipelines, "pipelines", (q, p) => table(q, PIPELINE, p, visit));
  if (isTable(doc.dicom)) {
    named(doc.dicom.peers, "dicom.peers", (d, p) => table(d, DICOM_PEER, p, visit));
  }
}

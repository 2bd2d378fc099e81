/**
 * Checks of one record against the gateway's own schema (options of each service type, targets,
 * networks, middleware options) and of the rules across records that the schema cannot see
 * (service types, transform references, JOLT specs). Each problem names the field of the record.
 */
import {
  describeUrlCredentials,
  literalSecretPaths,
  optionSchemaOf,
  urlCredentialPaths,
  validateConfig,
} from "../../shared/gateway_config/mod.ts";
import { compile, JoltSpecError } from "../../shared/jolt/mod.ts";
import type {
  BackendRecord,
  EndpointRecord,
  MiddlewareRecord,
  NetworkRecord,
  ServiceRecord,
} from "../store/mod.ts";
import { backendTable, networkTable, transformFile } from "./toml.ts";

/** One problem of a record, at one of its fields. */
export interface FieldProblem {
  field: string;
  message: string;
}

/** Runs the gateway validator on `raw` and keeps the problems under `prefix`, renamed by `rename`. */
function schemaProblems(
  raw: Record<string, unknown>,
  prefix: string,
  rename: (rest: string) => string = (r) => r,
): FieldProblem[] {
  const under = (path: string) => path === prefix || path.startsWith(`${prefix}.`);
  const problems = validateConfig(raw).problems
    .filter((p) => under(p.path))
    .map((p) => ({ field: rename(p.path.slice(prefix.length + 1)), message: p.message }));
  // The cloud never stores a credential: only a reference the gateway expands from its own
  // environment (which the gateway's [cloud] allowed_env must list).
  const secrets = literalSecretPaths(raw).filter(under);
  for (const path of secrets) {
    problems.push({
      field: rename(path.slice(prefix.length + 1)),
      message: "a credential cannot be stored in the cloud: write an environment reference such " +
        "as `${S3_SECRET}` and list the variable in the gateway's [cloud] allowed_env",
    });
  }
  // Nor inside a URL, in any string of the record (so options added later are covered too).
  for (const { path, found } of urlCredentialPaths(raw)) {
    if (!under(path) || secrets.includes(path)) continue;
    problems.push({
      field: rename(path.slice(prefix.length + 1)),
      message: urlCredentialMessage(describeUrlCredentials(found)),
    });
  }
  return problems;
}

/** Why a URL with credentials (`what`: their description, never values) is refused. */
export function urlCredentialMessage(what: string): string {
  return `a credential inside a URL (${what}) cannot be stored in the cloud: write environment ` +
    "references such as `https://${FHIR_USER}:${FHIR_PASSWORD}@host/` or " +
    "`?access_token=${FHIR_TOKEN}` (listed in the gateway's [cloud] allowed_env), or use the " +
    "backend's credential options (`options.auth`, or `access_key_id`/`secret_access_key` of " +
    "storage)";
}

/** Problems of an endpoint's type and options. */
export function checkEndpoint(e: EndpointRecord, service: ServiceRecord): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!service.endpoint_types.includes(e.type)) {
    problems.push({
      field: "type",
      message: `service \`${service.name}\` allows endpoint types: ${
        service.endpoint_types.join(", ") || "none"
      }`,
    });
  }
  const raw = { endpoints: { [e.name]: { service: e.type, options: e.options } } };
  problems.push(...schemaProblems(raw, `endpoints.${e.name}`, (r) => r === "service" ? "type" : r));
  return problems;
}

/** Problems of a backend's type, options, targets and settings. */
export function checkBackend(b: BackendRecord, service: ServiceRecord): FieldProblem[] {
  const problems: FieldProblem[] = [];
  if (!service.backend_types.includes(b.type)) {
    problems.push({
      field: "type",
      message: `service \`${service.name}\` allows backend types: ${
        service.backend_types.join(", ") || "none"
      }`,
    });
  }
  const seen = new Set<string>();
  b.targets.forEach((t, i) => {
    if (seen.has(t.name)) {
      problems.push({
        field: `targets.${i}.name`,
        message: `target \`${t.name}\` is listed twice`,
      });
    }
    seen.add(t.name);
  });
  const { backend, targets } = backendTable(b);
  const raw = { backends: { [b.name]: backend }, targets };
  problems.push(...schemaProblems(raw, `backends.${b.name}`, (r) => r === "service" ? "type" : r));
  const names = Object.keys(targets);
  names.forEach((n, i) => {
    for (const p of schemaProblems(raw, `targets.${n}`)) {
      problems.push({ field: `targets.${i}.${p.field}`, message: p.message });
    }
  });
  return problems;
}

/** Problems of a middleware's type, transform reference and options. */
export function checkMiddleware(m: MiddlewareRecord): FieldProblem[] {
  const schema = optionSchemaOf("middleware", m.type);
  const takesSpec = schema?.fields !== undefined && "spec_path" in schema.fields;
  const problems: FieldProblem[] = [];
  if ("spec_path" in m.options) {
    problems.push({
      field: "options.spec_path",
      message: "set transform_id instead: the cloud writes spec_path from it",
    });
  }
  if (takesSpec && !m.transform_id) {
    problems.push({ field: "transform_id", message: `required for middleware of type ${m.type}` });
  }
  if (!takesSpec && m.transform_id) {
    problems.push({
      field: "transform_id",
      message: `middleware of type ${m.type} takes no transform`,
    });
  }
  if (problems.length) return problems;
  const options = takesSpec
    ? { ...m.options, spec_path: transformFile(m.transform_id!) }
    : m.options;
  const raw = { middleware: { [m.name]: { type: m.type, options } } };
  return schemaProblems(raw, `middleware.${m.name}`);
}

/** Problems of a network's listener settings. */
export function checkNetwork(n: NetworkRecord): FieldProblem[] {
  return schemaProblems({ network: { [n.name]: networkTable(n) } }, `network.${n.name}`);
}

/** Problems of a JOLT chain spec (compiled with shared/jolt). */
export function checkTransformSpec(spec: unknown): FieldProblem[] {
  try {
    compile(spec);
    return [];
  } catch (err) {
    if (!(err instanceof JoltSpecError)) throw err;
    const field = err.operationIndex < 0
      ? "spec"
      : ["spec", err.operationIndex, ...(err.path.length ? ["spec", ...err.path] : [])].join(".");
    return [{ field, message: err.message }];
  }
}

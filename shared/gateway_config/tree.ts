/**
 * The table of sections: every table of a configuration file, where it sits and which spec
 * describes it, in the order the reference lists them. The option tables of endpoints, backends
 * and middleware are described by their component type (registry.ts), read from the entry's
 * `service` or `type`. The generated reference and the key walk (secrets, paths) walk this table;
 * validation and the writer check and write the same specs.
 */
import { z } from "zod";
import { BACKEND_AUTH } from "./backend_auth.ts";
import type { ComponentKind } from "./component_type.ts";
import { childPath, type FieldSpec, isTable, type TableSpec } from "./fields.ts";
import { optionSchemaOf } from "./registry.ts";
import {
  ALERT_CHANNEL_TYPES,
  ALERT_RULE_KINDS,
  alertChannelSpec,
  alertRuleSpec,
  ALERTS,
} from "./components/mod.ts";
import { MANAGEMENT_TOKEN, PIPELINE_TRACKING, TRACKING } from "./components/mod.ts";
import { AUDIT_SYSLOG } from "./components/mod.ts";
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

/** One table of the file, or the option tables of one kind of component. */
export interface ConfigTable {
  /** Dotted path; `<name>` (or `<AET>`) stands for every entry of a named section. */
  path: string;
  /** The keys; absent for option tables, which take their component type's. */
  spec?: TableSpec;
  /** Option tables: the kind of component, whose type the entry's `selector` key names. */
  component?: { kind: ComponentKind; selector: "service" | "type" };
  /** Heading in the reference (default: the path in brackets). */
  title?: string;
  /** A sentence under the heading. */
  intro?: string;
  /** The table applies only to entries (the nearest named entry) for which this holds. */
  when?: (entry: Record<string, unknown>) => boolean;
  /** Sub-tables each of whose keys is described by one spec (`headers` of a backend's auth). */
  eachKey?: Record<string, FieldSpec>;
}

/** A credential-valued entry of a table of strings (the `headers` of a backend's `auth`). */
const HEADER_VALUE: FieldSpec = {
  schema: z.string(),
  type: "string",
  doc: "a header value",
  secret: true,
};

/** Every table of the file, in reference order. */
export const CONFIG_TABLES: readonly ConfigTable[] = [
  { path: "", spec: TOP_LEVEL, title: "Top level" },
  { path: "cloud", spec: CLOUD },
  { path: "network.<name>", spec: NETWORK },
  { path: "network.<name>.http3", spec: HTTP3_LISTENER },
  { path: "endpoints.<name>", spec: ENDPOINT },
  { path: "endpoints.<name>.options", component: { kind: "endpoint", selector: "service" } },
  { path: "backends.<name>", spec: BACKEND },
  { path: "backends.<name>.health_check", spec: HEALTH_CHECK },
  {
    path: "backends.<name>.queue",
    spec: QUEUE,
    intro:
      "Durable delivery: requests are kept on disk, answered 202 and delivered in the background (docs/delivery.md).",
  },
  { path: "backends.<name>.options", component: { kind: "backend", selector: "service" } },
  {
    path: "backends.<name>.options.auth",
    spec: BACKEND_AUTH,
    intro: "Credentials of an `http`, `fhir`, `dicomweb` or `http3` backend (docs/security.md).",
    when: (b) => optionSchemaOf("backend", b.service)?.fields?.auth !== undefined,
    // Every static header value is treated as a credential.
    eachKey: { headers: HEADER_VALUE },
  },
  { path: "targets.<name>", spec: TARGET },
  { path: "middleware.<name>", spec: MIDDLEWARE },
  { path: "middleware.<name>.options", component: { kind: "middleware", selector: "type" } },
  { path: "pipelines.<name>", spec: PIPELINE },
  {
    path: "pipelines.<name>.tracking",
    spec: PIPELINE_TRACKING,
    intro:
      "Message tracking of the pipeline: a record of each message, and its content when asked (docs/operations.md).",
  },
  { path: "proxy.content_limits", spec: CONTENT_LIMITS },
  { path: "management", spec: MANAGEMENT },
  {
    path: "management.tokens.<name>",
    spec: MANAGEMENT_TOKEN,
    intro:
      'A further management token with a role (docs/management-api.md, "Roles"); the `token_file` token stays admin.',
  },
  { path: "logging", spec: LOGGING },
  { path: "runtime", spec: RUNTIME },
  { path: "audit", spec: AUDIT },
  {
    path: "audit.syslog",
    spec: AUDIT_SYSLOG,
    intro:
      "The audit records as RFC 5424 syslog messages to a central collector, over TLS (RFC 5425) as IHE ATNA requires (docs/security.md).",
  },
  {
    path: "tracking",
    spec: TRACKING,
    intro:
      'The message tracking store shared by the pipelines that track (docs/operations.md, "Message tracking").',
  },
  {
    path: "dicom.peers.<AET>",
    spec: DICOM_PEER,
    intro:
      "A remote DICOM AE (the table name is its AE title): the destinations C-MOVE requests to a `dicom_scp` endpoint may name.",
  },
  {
    path: "alerts",
    spec: ALERTS,
    intro:
      'Alerts on the gateway\'s own state, sent to webhooks and by e-mail (docs/operations.md, "Alerts").',
  },
  ...ALERT_RULE_KINDS.map((kind): ConfigTable => ({
    path: "alerts.rules.<name>",
    spec: alertRuleSpec(kind),
    title: `\`[alerts.rules.<name>]\` with kind = "${kind}"`,
    when: (rule) => rule.kind === kind,
  })),
  ...ALERT_CHANNEL_TYPES.map((type): ConfigTable => ({
    path: "alerts.channels.<name>",
    spec: alertChannelSpec(type),
    title: `\`[alerts.channels.<name>]\` with type = "${type}"`,
    when: (channel) => channel.type === type,
    // Every header value of a webhook is treated as a credential.
    ...(type === "webhook" ? { eachKey: { headers: HEADER_VALUE } } : {}),
  })),
];

/** One table of a document that a ConfigTable describes. */
export interface TableAt {
  /** The table itself. */
  table: Record<string, unknown>;
  /** Its dotted path in the document. */
  path: string;
  /** The nearest named entry holding it (`[backends.<name>]`), or the document. */
  entry: Record<string, unknown>;
  /** The keys that describe it (an option table's: its component type's; may be undefined). */
  spec: TableSpec | undefined;
}

/** Every table of `doc` at `described`'s path, with the spec that describes it. */
export function tablesAt(doc: Record<string, unknown>, described: ConfigTable): TableAt[] {
  let frontier = [{ table: doc, path: "", entry: doc }];
  for (const segment of described.path.split(".").filter((s) => s !== "")) {
    const next: typeof frontier = [];
    for (const at of frontier) {
      if (segment.startsWith("<")) {
        for (const [name, value] of Object.entries(at.table)) {
          if (isTable(value)) {
            next.push({ table: value, path: childPath(at.path, name), entry: value });
          }
        }
      } else if (isTable(at.table[segment])) {
        const table = at.table[segment] as Record<string, unknown>;
        next.push({ table, path: childPath(at.path, segment), entry: at.entry });
      }
    }
    frontier = next;
  }
  return frontier
    .filter((at) => !described.when || described.when(at.entry))
    .map((at) => ({
      ...at,
      spec: described.component
        ? optionSchemaOf(described.component.kind, at.entry[described.component.selector])?.fields
        : described.spec,
    }));
}

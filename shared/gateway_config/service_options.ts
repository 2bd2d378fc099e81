/**
 * The `options` tables of each endpoint service, backend service and middleware type. Later work
 * (DICOM, storage, HTTP/3, new middleware) reads or extends these registries in one place.
 */
import { z } from "zod";
import {
  BACKEND_TLS_FIELDS,
  backendAuthProblems,
  backendAuthSchema,
  serverNameProblems,
} from "./backend_auth.ts";
import { RETRIEVE_FIELDS, retrieveBudgetProblems } from "./dicom_retrieve.ts";
import { field, type TableSpec } from "./fields.ts";
import { rangeProblem } from "../net/mod.ts";
import type { BackendService, EndpointService } from "./types.ts";
import {
  absolutePath,
  aeTitle,
  hostName,
  httpUrl,
  int,
  pathPrefix,
  port,
  S3_ROOT,
  text,
} from "./values.ts";

/** A problem found by a cross-key rule, at `key` of the options table (or the table itself). */
export interface RuleProblem {
  /** The options key the problem is about; absent for the table itself. */
  key?: string;
  /** What is wrong. */
  message: string;
}

/** The options table of one service or middleware type. */
export interface OptionSchema<Owner = unknown> {
  /** One sentence for the reference. */
  doc: string;
  /** Allowed keys; when absent, any options table is accepted unchecked. */
  fields?: TableSpec;
  /** Rules across keys; they run only when every key passed its own check. */
  rules?: (options: Record<string, unknown>, owner: Owner) => RuleProblem[];
}

/** What backend option rules may read of their backend. */
export interface BackendOwner {
  /** The names of the backend's `[targets.*]`. */
  targets: string[];
}

/** `path_prefix` of HTTP-family endpoints. */
const PATH_PREFIX_DOC = "Path the endpoint serves; requests under it are routed here.";

/** Endpoint services served by the HTTP (and HTTP/3) listeners of the networks. */
export const HTTP_FAMILY_ENDPOINTS: readonly EndpointService[] = [
  "http",
  "fhir",
  "jmix",
  "dicomweb",
];

const requiredPrefix = (example: string): OptionSchema => ({
  doc: "HTTP-family endpoint.",
  fields: {
    path_prefix: field("string", pathPrefix(), PATH_PREFIX_DOC, { required: true, example }),
  },
});

/** A PEM block of `label` (`PRIVATE KEY`, `PUBLIC KEY`). */
const pem = (label: string) =>
  text().refine(
    (v) => v.includes(`-----BEGIN ${label}-----`) && v.includes(`-----END ${label}-----`),
    `must be a PEM block (-----BEGIN ${label}-----)`,
  );

/** `[endpoints.<name>.options]` per service. */
export const ENDPOINT_OPTION_SCHEMAS: Record<EndpointService, OptionSchema> = {
  http: requiredPrefix("/api"),
  fhir: requiredPrefix("/fhir"),
  jmix: {
    doc: "JMIX package endpoint: `/api/jmix` routes under the prefix; packages and the study " +
      "index live in the pipeline's `storage` backend, studies are retrieved through its " +
      "`dicom_scu` backend (see docs/jmix.md).",
    fields: {
      path_prefix: field("string", pathPrefix(), PATH_PREFIX_DOC, {
        required: true,
        example: "/jmix",
      }),
      sender_name: field("string", text(), "`sender.name` of the packages the gateway builds.", {
        default: "gateway",
        example: "hospital-a-gateway",
      }),
      max_package_bytes: field("integer", int(1), "Largest package upload (413 beyond it).", {
        default: 104_857_600,
        example: 536_870_912,
      }),
      max_uncompressed_bytes: field(
        "integer",
        int(1),
        "Most bytes the entries of one package may inflate to (zip bombs are refused).",
        { default: 1_073_741_824, example: 4_294_967_295 },
      ),
      max_entries: field("integer", int(1), "Most zip entries in one package.", {
        default: 10_000,
        example: 50_000,
      }),
      signing_key: field(
        "string",
        pem("PRIVATE KEY"),
        "Ed25519 private key (PKCS#8 PEM): built packages get a `manifest.jws`.",
        { secret: true, example: "${JMIX_SIGNING_KEY}" },
      ),
      signing_key_id: field("string", text(), "`kid` of the signature.", { example: "gw-2025" }),
      verify_keys: field(
        "array of strings",
        z.array(pem("PUBLIC KEY")),
        "Ed25519 public keys (SPKI PEM) an uploaded `manifest.jws` must verify with.",
        { example: ["${JMIX_PARTNER_KEY}"] },
      ),
      require_signature: field(
        "boolean",
        z.boolean(),
        "Refuse uploads without a valid `manifest.jws`.",
        { default: false, example: true },
      ),
      encryption_public_key: field(
        "string",
        pem("PUBLIC KEY"),
        "X25519 public key (SPKI PEM): built packages carry their payload encrypted for it.",
        { example: "${JMIX_RECIPIENT_KEY}" },
      ),
      encryption_key_id: field("string", text(), "`key_id` written with the encryption.", {
        example: "recipient-1",
      }),
      decryption_key: field(
        "string",
        pem("PRIVATE KEY"),
        "X25519 private key (PKCS#8 PEM): encrypted uploads are decrypted to be checked and indexed.",
        { secret: true, example: "${JMIX_DECRYPTION_KEY}" },
      ),
    },
    rules: (o) =>
      o.require_signature === true && o.verify_keys === undefined
        ? [{ key: "verify_keys", message: "require_signature needs at least one verify key" }]
        : [],
  },
  dicomweb: {
    doc:
      "DICOMweb endpoint: QIDO-RS, WADO-RS and STOW-RS, forwarded to a `dicomweb` backend or bridged to a `dicom_scu` one (other backends: 501 Not Implemented).",
    fields: {
      path_prefix: field("string", pathPrefix(), PATH_PREFIX_DOC, {
        default: "/dicomweb",
        example: "/dicomweb",
      }),
    },
  },
  dicom_scp: {
    doc: "DICOM DIMSE listener (its own TCP port; not served by networks).",
    fields: {
      local_aet: field(
        "string",
        aeTitle(),
        "AE title of this SCP (1-16 characters, no backslash or control characters).",
        {
          required: true,
          example: "GATEWAY",
        },
      ),
      bind_addr: field("string", text(), "Address the DIMSE listener binds.", {
        default: "0.0.0.0",
        example: "127.0.0.1",
      }),
      port: field("integer", port(), "TCP port of the DIMSE listener.", {
        default: 11112,
        example: 104,
      }),
      enable_echo: field("boolean", z.boolean(), "Answer C-ECHO.", {
        default: true,
        example: false,
      }),
      enable_find: field("boolean", z.boolean(), "Answer C-FIND.", {
        default: false,
        example: true,
      }),
      enable_move: field("boolean", z.boolean(), "Answer C-MOVE.", {
        default: false,
        example: true,
      }),
      enable_get: field("boolean", z.boolean(), "Answer C-GET.", { default: false, example: true }),
      enable_store: field("boolean", z.boolean(), "Accept C-STORE.", {
        default: false,
        example: true,
      }),
      storage_dir: field("string", text(), "Directory where received instances are kept.", {
        path: "config",
        example: "data/dicom",
      }),
      allowed_calling_aets: field(
        "array of strings",
        z.array(aeTitle()),
        "Calling AE titles accepted; when absent, any.",
        {
          example: ["MODALITY1"],
        },
      ),
      peers: field(
        "table of tables",
        z.record(
          aeTitle(),
          z.strictObject({
            services: z.array(z.enum(["echo", "find", "get", "move", "store"])).min(1),
            move_destinations: z.array(aeTitle()).default([]),
          }),
        ),
        "Per calling AE: the services it may use (`echo`, `find`, `get`, `move`, `store`, among " +
          "those enabled) and the AEs it may C-MOVE to; only these AEs may associate.",
        {
          example: {
            MODALITY1: { services: ["echo", "store"] },
            VIEWER: { services: ["echo", "find", "move"], move_destinations: ["VIEWER"] },
          },
        },
      ),
      tls_cert_path: field(
        "string",
        text(),
        "PEM certificate chain: with `tls_key_path` the listener speaks DICOM TLS (PS3.15 B.1) " +
          "instead of plain TCP.",
        { path: "config", example: "certs/scp.pem" },
      ),
      tls_key_path: field("string", text(), "PEM private key of `tls_cert_path`.", {
        path: "config",
        example: "certs/scp-key.pem",
      }),
      tls_client_ca_path: field(
        "string",
        text(),
        "PEM CA certificates: every peer must present a client certificate issued by one of " +
          "them (others are refused in the TLS handshake).",
        { path: "config", example: "certs/modalities-ca.pem" },
      ),
    },
    rules: (o) => [
      ...(o.peers !== undefined && o.allowed_calling_aets !== undefined
        ? [{ key: "peers", message: "use peers or allowed_calling_aets, not both" }]
        : []),
      ...bothOrNeither(o, "tls_cert_path", "tls_key_path"),
      ...(o.tls_client_ca_path !== undefined && o.tls_cert_path === undefined
        ? [{
          key: "tls_client_ca_path",
          message: "client certificates need TLS: set tls_cert_path and tls_key_path too",
        }]
        : []),
    ],
  },
};

/** Backend services that call HTTP base URLs, and so may use `targets` and `health_check`. */
export const HTTP_LIKE_BACKENDS: readonly BackendService[] = ["http", "fhir", "dicomweb"];

/** `base_url` or `targets`, not both, not neither. */
function baseUrlOrTargets(options: Record<string, unknown>, owner: BackendOwner): RuleProblem[] {
  const hasUrl = options.base_url !== undefined;
  const hasTargets = owner.targets.length > 0;
  if (hasUrl && hasTargets) {
    return [{ key: "base_url", message: "use base_url or targets, not both" }];
  }
  if (!hasUrl && !hasTargets) {
    return [{ key: "base_url", message: "missing required key `base_url` (or list `targets`)" }];
  }
  return [];
}

/** `auth` of the HTTP-family backends: a table checked against BACKEND_AUTH. */
const authField = () =>
  field(
    "table",
    backendAuthSchema(),
    "Credentials sent to the upstream; see `[backends.<name>.options.auth]`.",
    { example: { type: "bearer", token: "${FHIR_TOKEN}" } },
  );

/** Problems of `auth` across its keys, at `auth.<key>`. */
function authRules(options: Record<string, unknown>): RuleProblem[] {
  const auth = options.auth as Record<string, unknown> | undefined;
  if (!auth) return [];
  return backendAuthProblems(auth).map(([key, message]) => ({ key: `auth.${key}`, message }));
}

const httpLike = (doc: string, example: string): OptionSchema<BackendOwner> => ({
  doc,
  fields: {
    base_url: field("string", httpUrl(), "Base URL of the upstream (http:// or https://).", {
      requiredWhen: "`targets` is empty (use one or the other)",
      example,
    }),
    upstream_protocol: field(
      "string",
      z.enum(["http1", "auto"]),
      "`http1`: the gateway's pooled HTTP/1.1 client (fastest for API traffic); `auto`: Deno's " +
        "fetch, which negotiates HTTP/2 with https upstreams and streams large downloads natively.",
      { default: "http1", example: "auto" },
    ),
    auth: authField(),
    ...BACKEND_TLS_FIELDS,
  },
  rules: (o, owner) => [
    ...baseUrlOrTargets(o, owner),
    ...authRules(o),
    ...bothOrNeither(o, "client_cert_path", "client_key_path"),
    ...serverNameProblems(o),
  ],
});

/** Reports `key` when set and `condition` is false. */
function onlyWhen(
  options: Record<string, unknown>,
  keys: string[],
  condition: boolean,
  why: string,
): RuleProblem[] {
  if (condition) return [];
  return keys.filter((k) => options[k] !== undefined).map((key) => ({ key, message: why }));
}

/** Both keys set or neither. */
function bothOrNeither(options: Record<string, unknown>, a: string, b: string): RuleProblem[] {
  const hasA = options[a] !== undefined;
  const hasB = options[b] !== undefined;
  if (hasA === hasB) return [];
  const missing = hasA ? b : a;
  return [{ key: missing, message: `missing \`${missing}\`: set both ${a} and ${b}, or neither` }];
}

/** `[backends.<name>.options]` per service. */
export const BACKEND_OPTION_SCHEMAS: Record<BackendService, OptionSchema<BackendOwner>> = {
  http: httpLike("HTTP upstream.", "http://127.0.0.1:8081"),
  fhir: httpLike("FHIR server.", "http://hapi:8080/fhir"),
  dicomweb: httpLike("DICOMweb server.", "http://orthanc:8042/dicom-web"),
  http3: {
    doc: "HTTP/3 (QUIC) upstream; TLS 1.3 always.",
    fields: {
      host: field("string", text(), "Target hostname.", {
        required: true,
        example: "api.example.com",
      }),
      port: field("integer", port(), "Target UDP port.", { default: 443, example: 8443 }),
      base_path: field("string", absolutePath(), "Path prefix added to every request.", {
        example: "/v1",
      }),
      ca_cert_path: field("string", text(), "PEM CA certificate, for self-signed servers.", {
        path: "config",
        example: "certs/ca.pem",
      }),
      timeout_secs: field("integer", int(1), "Request timeout in seconds.", {
        default: 30,
        example: 10,
      }),
      server_name: field(
        "string",
        hostName(),
        "Name the server's certificate is checked against (SNI) when `host` is an address.",
        { example: "api.example.com" },
      ),
      auth: authField(),
    },
    rules: authRules,
  },
  dicom_scu: {
    doc: "DICOM DIMSE peer (PACS): C-ECHO, C-FIND, C-MOVE, C-GET, C-STORE.",
    fields: {
      aet: field("string", aeTitle(), "Remote AE title.", { required: true, example: "ORTHANC" }),
      host: field("string", text(), "PACS hostname or IP.", {
        required: true,
        example: "pacs.local",
      }),
      port: field("integer", port(), "PACS port.", { required: true, example: 4242 }),
      local_aet: field("string", aeTitle(), "AE title of the gateway as SCU.", {
        default: "GATEWAY_SCU",
        example: "GW_SCU",
      }),
      dimse_retrieve_mode: field(
        "string",
        z.enum(["get", "move"]),
        "`get` (C-GET, no PACS-side setup) or `move` (C-MOVE; the PACS must know the SCU's AE title and address).",
        {
          default: "get",
          example: "move",
        },
      ),
      use_tls: field("boolean", z.boolean(), "DICOM TLS to the PACS.", {
        default: false,
        example: true,
      }),
      incoming_store_port: field(
        "integer",
        port(),
        "Port of the C-STORE SCP that receives C-MOVE results.",
        {
          requiredWhen: "`dimse_retrieve_mode` is `move`",
          example: 11113,
        },
      ),
      persistent_store_scp: field(
        "boolean",
        z.boolean(),
        "Keep the C-STORE SCP listening between requests.",
        {
          default: false,
          example: true,
        },
      ),
      ca_cert_path: field("string", text(), "PEM CA certificate of the PACS (with `use_tls`).", {
        path: "config",
        example: "certs/pacs-ca.pem",
      }),
      cert_path: field("string", text(), "PEM client certificate (with `use_tls`).", {
        path: "config",
        example: "certs/scu.pem",
      }),
      key_path: field("string", text(), "PEM client key (with `use_tls`).", {
        path: "config",
        example: "certs/scu-key.pem",
      }),
      association_idle_secs: field(
        "integer",
        int(0, 3600),
        "Seconds an association used for C-ECHO or C-FIND stays open for the next one with the " +
          "same contexts (saves the connect and negotiation round trips); 0 opens one per " +
          "operation.",
        { default: 15, example: 60 },
      ),
      ...RETRIEVE_FIELDS,
    },
    rules: (o) => [
      ...(o.dimse_retrieve_mode === "move" && o.incoming_store_port === undefined
        ? [{
          key: "incoming_store_port",
          message:
            'missing required key `incoming_store_port` (required when dimse_retrieve_mode is "move")',
        }]
        : []),
      ...onlyWhen(
        o,
        ["ca_cert_path", "cert_path", "key_path"],
        o.use_tls === true,
        "applies only when use_tls = true",
      ),
      ...bothOrNeither(o, "cert_path", "key_path"),
      ...retrieveBudgetProblems(o),
    ],
  },
  storage: {
    doc: "Objects in a local directory or an S3-compatible bucket, addressed by path templates " +
      "(see docs/storage.md).",
    fields: {
      root: field(
        "string",
        text().refine(
          (v) => !v.startsWith("s3://") || S3_ROOT.test(v),
          "an S3 root must be s3://<bucket>/<prefix> with a valid bucket name",
        ),
        "Local directory (relative to the config file's directory) or `s3://<bucket>/<prefix>`.",
        {
          path: "config",
          required: true,
          example: "s3://archive/incoming",
        },
      ),
      read_pattern: field(
        "string",
        text(),
        "Path template for GET, HEAD and DELETE: `{path}` (the request path below the endpoint), " +
          "`{<metadata key>}`, `{<field>}`.",
        {
          requiredWhen: "`write_pattern` is absent",
          example: "{path}",
        },
      ),
      write_pattern: field(
        "string",
        text(),
        "Path template for POST and PUT: as read_pattern, plus `{uuid}`, `{timestamp}`, " +
          "`{timestamp_compact}`, `{date}`.",
        {
          requiredWhen: "`read_pattern` is absent",
          example: "{patient_id}/{uuid}.json",
        },
      ),
      region: field(
        "string",
        text(),
        "S3 region (`${AWS_REGION}` takes it from the environment).",
        {
          requiredWhen: "`root` is `s3://`",
          example: "eu-central-1",
        },
      ),
      access_key_id: field("string", text(), "S3 access key id (else AWS_ACCESS_KEY_ID).", {
        secret: true,
        example: "${S3_KEY_ID}",
      }),
      secret_access_key: field(
        "string",
        text(),
        "S3 secret key (else AWS_SECRET_ACCESS_KEY, with AWS_SESSION_TOKEN if set).",
        {
          secret: true,
          example: "${S3_SECRET}",
        },
      ),
      endpoint: field(
        "string",
        httpUrl(),
        "Endpoint of an S3-compatible store (path-style addressing).",
        {
          example: "http://minio:9000",
        },
      ),
    },
    rules: (o) => {
      const s3 = typeof o.root === "string" && o.root.startsWith("s3://");
      const problems: RuleProblem[] = [];
      if (o.read_pattern === undefined && o.write_pattern === undefined) {
        problems.push({ message: "set read_pattern, write_pattern, or both" });
      }
      if (s3 && o.region === undefined) {
        problems.push({
          key: "region",
          message: "missing required key `region` (required when root is s3://)",
        });
      }
      problems.push(
        ...onlyWhen(
          o,
          ["region", "access_key_id", "secret_access_key", "endpoint"],
          s3,
          "applies only when root is s3://",
        ),
        ...bothOrNeither(o, "access_key_id", "secret_access_key"),
      );
      return problems;
    },
  },
  echo: { doc: "Returns the request as the response; takes no options.", fields: {} },
};

/** Signature algorithms `jwt_auth` may accept: asymmetric ones only. */
const JWT_ALGORITHM_NAMES = [
  "RS256",
  "RS384",
  "RS512",
  "PS256",
  "PS384",
  "PS512",
  "ES256",
  "ES384",
  "ES512",
  "EdDSA",
] as const;

/** An HTTP header name (RFC 9110 token), matched case-insensitively. */
const headerName = z.string().regex(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}$/, "an HTTP header name");

/** `realm` of an authentication middleware's challenge. */
const realmField = (example: string) =>
  field(
    "string",
    z.string().min(1).max(100).regex(/^[^"\\\r\n]*$/, "no quotes, backslashes or line breaks"),
    "Realm named in the `WWW-Authenticate` challenge.",
    { default: "gateway", example },
  );

/** `forward_credentials` of an authentication middleware: what it removes unless set. */
const forwardCredentials = (what: string) =>
  field("boolean", z.boolean(), `Pass ${what} on to the backend (else it is removed).`, {
    default: false,
    example: true,
  });

/** An address or CIDR range. */
const addressRange = z.string().refine((v) => rangeProblem(v) === null, {
  message: "an IPv4 or IPv6 address, or a CIDR range such as 10.0.0.0/8 or fd00::/8",
});

/** Headers the gateway owns (message framing, hop-by-hop): no rule may set or remove them. */
const GATEWAY_OWNED = new Set([
  "host",
  "content-length",
  "transfer-encoding",
  "connection",
  "keep-alive",
  "upgrade",
  "te",
  "trailer",
  "proxy-connection",
]);

/** A header name a `headers` rule may touch. */
const ownHeaderName = headerName.refine((h) => !GATEWAY_OWNED.has(h.toLowerCase()), {
  message: "framing and hop-by-hop headers are the gateway's",
});

/** Header name -> value (no line breaks or NUL in values). */
const headerTable = z.record(
  ownHeaderName,
  z.string().max(8192).regex(/^[^\r\n\0]*$/, "no line breaks"),
);

/** A CORS origin: `*`, or `scheme://host[:port]` exactly as browsers send it. */
const corsOrigin = z.string().refine((v) => {
  if (v === "*") return true;
  try {
    return new URL(v).origin === v;
  } catch {
    return false;
  }
}, "an origin such as https://app.example.org (scheme, host, port; no path), or *");

/** FHIR RESTful interactions (gateway/middleware/request_kind.ts classifies requests). */
export const FHIR_INTERACTIONS = [
  "read",
  "vread",
  "update",
  "patch",
  "delete",
  "history",
  "create",
  "search",
  "capabilities",
  "batch",
  "operation",
] as const;

/** DICOMweb services: QIDO-RS search, WADO-RS retrieve, STOW-RS store. */
export const DICOMWEB_SERVICES = ["qido", "wado", "stow"] as const;

/** A URLPattern pathname (`/Patient/:id`, `/studies/*`). */
const urlPatternPath = z.string().max(512).startsWith("/", "starts with `/`")
  // Regular-expression groups (`:id(\\d+)`) are refused: a pattern from a pushed configuration
  // must not be able to make matching a request path run in more than linear time.
  .refine((p) => !/[()]/.test(p), "named parameters, `*` and `{…}?` only, no `(` regexp groups")
  .refine((p) => {
    try {
      new URLPattern({ pathname: p });
      return true;
    } catch {
      return false;
    }
  }, "a URLPattern pathname such as /Patient/:id or /studies/*");

/** Names of API keys and users: they become `auth.subject`. */
const NAME_PATTERN = /^[A-Za-z0-9_.@-]{1,100}$/;

const transformFields = (kind: "data" | "metadata"): TableSpec => ({
  spec_path: field("string", text(), "JOLT spec file, relative to `transforms_path`.", {
    path: "transforms",
    required: true,
    example: "patient.json",
  }),
  apply: kind === "data"
    ? field(
      "string",
      z.enum(["left", "right", "both"]),
      "`left`: requests; `right`: responses; `both`.",
      { default: "left", example: "both" },
    )
    : field(
      "string",
      z.enum(["left"]),
      "Only `left`: metadata belongs to requests.",
      { default: "left", example: "left" },
    ),
  fail_on_error: field(
    "boolean",
    z.boolean(),
    "Fail the request when the transform fails (else log and continue).",
    {
      default: true,
      example: false,
    },
  ),
  ...(kind === "data"
    ? {
      debug: field("boolean", z.boolean(), "Log transform input and output at debug level.", {
        default: false,
        example: true,
      }),
      input: field(
        "string",
        z.enum(["data", "envelope"]),
        "`data`: the spec sees the body data; `envelope`: it sees `{data, context}` (see transforms docs).",
        { default: "data", example: "envelope" },
      ),
    }
    : {}),
});

/**
 * `[middleware.<name>.options]` per middleware type. Types registered without `fields` accept any
 * options table; a type not registered here is an error.
 */
export const MIDDLEWARE_OPTION_SCHEMAS: Record<string, OptionSchema> = {
  transform: { doc: "JSON-to-JSON JOLT transform of `data`.", fields: transformFields("data") },
  metadata_transform: {
    doc: "JOLT transform of the request metadata (the key-values used for routing).",
    fields: transformFields("metadata"),
  },
  api_key: {
    doc: "Requires an API key (a header, or a query parameter when set); the key's name becomes " +
      "`auth.subject`. Keys are stored as SHA-256 hashes (`printf %s KEY | sha256sum`).",
    fields: {
      header: field("string", headerName, "Header carrying the key.", {
        default: "x-api-key",
        example: "x-api-key",
      }),
      query_param: field(
        "string",
        z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, "1-64 letters, digits, `_`, `.` or `-`"),
        "Query parameter that may carry the key instead (keys in URLs end up in logs: prefer the header).",
        { example: "api_key" },
      ),
      keys: field(
        "table of strings",
        z.record(
          z.string().regex(NAME_PATTERN, "key names: letters, digits, `_`, `.`, `-`, `@`"),
          z.string().regex(/^sha256:[0-9a-fA-F]{64}$/, "`sha256:` and 64 hex digits of the key"),
        ).refine((keys) => Object.keys(keys).length > 0, "at least one key"),
        "Key name -> `sha256:<hex>` of the key; the name becomes `auth.subject`.",
        {
          required: true,
          example: {
            lab_system: "sha256:4c716d4cf211c7b7d2f3233c941771ad0507ea5bacf93b492766aa41ae9f720d",
          },
        },
      ),
      forward_credentials: forwardCredentials("the key"),
    },
  },
  jwt_auth: {
    doc: "OAuth 2.0 bearer tokens that are JWTs, verified against the issuer's keys (a JWKS URL " +
      "or file): signature, `iss`, `aud`, expiry, required claims and scopes. `sub` becomes " +
      "`auth.subject`.",
    fields: {
      jwks_url: field("string", httpUrl(), "The issuer's JWKS (e.g. its `jwks_uri`).", {
        requiredWhen: "`jwks_path` is not set",
        example: "https://login.example.org/oauth2/jwks",
      }),
      jwks_path: field("string", text(), "A JWKS file of public keys, instead of `jwks_url`.", {
        path: "config",
        example: "issuer-keys.json",
      }),
      issuer: field("string", text(), "Required `iss` of tokens.", {
        required: true,
        example: "https://login.example.org",
      }),
      audience: field(
        "array of strings",
        z.array(text()).min(1, "at least one audience"),
        "Accepted `aud` values (a token must name one of them).",
        { required: true, example: ["https://gateway.example.org/fhir"] },
      ),
      algorithms: field(
        "array of strings",
        z.array(z.enum(JWT_ALGORITHM_NAMES)).min(1, "at least one algorithm"),
        "Accepted signature algorithms (asymmetric only: `none` and HMAC are never accepted).",
        { default: ["RS256", "ES256"], example: ["RS256", "PS256", "ES256", "EdDSA"] },
      ),
      clock_skew_secs: field(
        "integer",
        int(0, 300),
        "Seconds of clock difference tolerated for `exp` and `nbf`.",
        { default: 60, example: 30 },
      ),
      required_scopes: field(
        "array of strings",
        z.array(z.string().regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, "a scope token")),
        "Scopes every token must carry (else 403 insufficient_scope).",
        { default: [], example: ["lab.orders"] },
      ),
      required_claims: field(
        "array of strings",
        z.array(z.string().min(1).max(100)),
        "Claims every token must carry (besides `iss`, `aud` and `exp`).",
        { default: [], example: ["sub"] },
      ),
      realm: realmField("fhir"),
      forward_credentials: forwardCredentials("the token"),
      smart: field(
        "boolean",
        z.boolean(),
        "Enforce SMART on FHIR scopes (v1 and v2) per resource type and interaction; `patient/` " +
          "scopes confine requests and answers to the token's `patient` compartment (FHIR R4 " +
          "CompartmentDefinition; fails closed, see docs/security.md).",
        { default: false, example: true },
      ),
      smart_shared_types: field(
        "array of strings",
        z.array(z.string().regex(/^[A-Z][A-Za-z]{0,63}$/, "a FHIR resource type")),
        "Resource types outside every patient compartment (Medication, Practitioner, …) that " +
          "`patient/` scopes may read and search, and that may appear in their answers.",
        { default: [], example: ["Medication", "Practitioner", "Organization"] },
      ),
    },
    rules: (o) => [
      ...((o.jwks_url === undefined) === (o.jwks_path === undefined)
        ? [{ key: "jwks_url", message: "set exactly one of `jwks_url` and `jwks_path`" }]
        : []),
      ...((o.smart_shared_types as unknown[] | undefined)?.length && o.smart !== true
        ? [{ key: "smart_shared_types", message: "`smart_shared_types` needs `smart = true`" }]
        : []),
    ],
  },
  ip_filter: {
    doc: "Allow and deny lists of client addresses and CIDR ranges (IPv4, IPv6); 403 " +
      "`ip_denied` otherwise. Behind `trusted_proxies`, the client is read from X-Forwarded-For.",
    fields: {
      allow: field(
        "array of strings",
        z.array(addressRange),
        "Only these addresses and ranges may pass (empty: any not denied).",
        { default: [], example: ["10.20.0.0/16", "fd00:20::/32"] },
      ),
      deny: field("array of strings", z.array(addressRange), "Never these (deny wins).", {
        default: [],
        example: ["10.20.99.0/24"],
      }),
      trusted_proxies: field(
        "array of strings",
        z.array(addressRange),
        "Proxies whose X-Forwarded-For names the client (read from the right).",
        { default: [], example: ["10.0.0.5"] },
      ),
    },
    rules: (o) =>
      (o.allow as unknown[]).length === 0 && (o.deny as unknown[]).length === 0
        ? [{
          key: "allow",
          message: "set `allow`, `deny` or both: an empty filter passes everyone",
        }]
        : [],
  },
  cors: {
    doc: "Cross-Origin Resource Sharing for browser clients: preflights answered by the gateway, " +
      "`Access-Control-Allow-Origin` on answers to allowed origins. List it before authentication.",
    fields: {
      allow_origins: field(
        "array of strings",
        z.array(corsOrigin).min(1, "at least one origin"),
        "Origins allowed (`https://app.example.org`), or `*` for any (not with credentials).",
        { required: true, example: ["https://viewer.example.org"] },
      ),
      allow_methods: field(
        "array of strings",
        z.array(z.string().regex(/^[A-Z]{1,20}$/, "an HTTP method in capitals")).min(1),
        "Methods a preflight may ask for.",
        {
          default: ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE"],
          example: ["GET", "POST"],
        },
      ),
      allow_headers: field(
        "array of strings",
        z.array(headerName),
        "Request headers a preflight may ask for (besides the CORS-safelisted ones).",
        { default: ["authorization"], example: ["authorization", "x-api-key"] },
      ),
      expose_headers: field(
        "array of strings",
        z.array(headerName),
        "Response headers the page may read.",
        { default: [], example: ["x-request-id", "etag"] },
      ),
      allow_credentials: field(
        "boolean",
        z.boolean(),
        "Let pages send cookies and credentials (`allow_origins` must then name origins).",
        { default: false, example: true },
      ),
      max_age_secs: field("integer", int(0, 86_400), "How long a browser may cache a preflight.", {
        default: 600,
        example: 3600,
      }),
    },
    rules: (o) =>
      o.allow_credentials === true && (o.allow_origins as string[]).includes("*")
        ? [{ key: "allow_origins", message: "with allow_credentials, name the origins (no `*`)" }]
        : [],
  },
  rate_limit: {
    doc: "A token bucket per key (client address, a header, or a metadata value such as " +
      "`auth.subject`); 429 `rate_limited` with Retry-After when it is empty.",
    fields: {
      requests_per_second: field(
        "number",
        z.number().positive().max(1_000_000),
        "Refill rate of each key's bucket.",
        { required: true, example: 20 },
      ),
      burst: field("integer", int(1, 1_000_000), "Bucket size: requests allowed at once.", {
        defaultDoc: "`requests_per_second` rounded up",
        example: 40,
      }),
      key: field(
        "string",
        z.string().regex(
          /^(client_ip|header:[!#$%&'*+.^_`|~0-9A-Za-z-]{1,64}|metadata:[A-Za-z0-9_.-]{1,100})$/,
          "`client_ip`, `header:<name>` or `metadata:<key>`",
        ),
        "What a bucket belongs to; `client_ip` honours `ip_filter`'s trusted proxies when one runs first.",
        { default: "client_ip", example: "metadata:auth.subject" },
      ),
      max_keys: field(
        "integer",
        int(1, 10_000_000),
        "Buckets kept (least recently used forgotten).",
        {
          default: 100_000,
          example: 10_000,
        },
      ),
    },
  },
  request_filter: {
    doc: "What a pipeline accepts: methods, paths, required headers, body size, FHIR resource " +
      "types and interactions, DICOMweb services; 403 `request_not_allowed` (405 for methods).",
    fields: {
      methods: field(
        "array of strings",
        z.array(z.string().regex(/^[A-Z]{1,20}$/, "an HTTP method in capitals")),
        "Methods accepted (empty: any).",
        { default: [], example: ["GET", "HEAD"] },
      ),
      paths: field(
        "array of strings",
        z.array(urlPatternPath),
        "URLPattern pathnames below the endpoint's prefix; one must match (empty: any).",
        { default: [], example: ["/Patient/:id", "/Observation{/*}?"] },
      ),
      required_headers: field(
        "array of strings",
        z.array(headerName),
        "Headers every request must carry.",
        {
          default: [],
          example: ["x-tenant"],
        },
      ),
      max_body_bytes: field(
        "integer",
        int(0),
        "Largest body by its declared length (a chunked body stays bounded by max_body_size).",
        { example: 1_048_576 },
      ),
      fhir_resource_types: field(
        "array of strings",
        z.array(z.string().regex(/^[A-Z][A-Za-z]{0,63}$/, "a FHIR resource type")),
        "FHIR resource types accepted (system-level calls refused when set).",
        { default: [], example: ["Patient", "Observation"] },
      ),
      fhir_interactions: field(
        "array of strings",
        z.array(z.enum(FHIR_INTERACTIONS)),
        "FHIR interactions accepted.",
        { default: [], example: ["read", "search"] },
      ),
      dicomweb_services: field(
        "array of strings",
        z.array(z.enum(DICOMWEB_SERVICES)),
        "DICOMweb services accepted (QIDO-RS search, WADO-RS retrieve, STOW-RS store).",
        { default: [], example: ["qido", "wado"] },
      ),
    },
  },
  headers: {
    doc: "Set and remove request and response headers; `request_from_metadata` forwards " +
      "metadata such as `auth.subject`. Framing and hop-by-hop headers cannot be changed.",
    fields: {
      request_set: field("table of strings", headerTable, "Request headers to set.", {
        default: {},
        example: { "x-gateway": "edge-1" },
      }),
      request_remove: field(
        "array of strings",
        z.array(ownHeaderName),
        "Request headers to remove.",
        {
          default: [],
          example: ["cookie"],
        },
      ),
      request_from_metadata: field(
        "table of strings",
        z.record(ownHeaderName, z.string().min(1).max(100)),
        "Request header -> metadata key whose value it carries (removed when the key is unset).",
        { default: {}, example: { "x-authenticated-user": "auth.subject" } },
      ),
      response_set: field("table of strings", headerTable, "Response headers to set.", {
        default: {},
        example: { "strict-transport-security": "max-age=31536000" },
      }),
      response_remove: field(
        "array of strings",
        z.array(ownHeaderName),
        "Response headers to remove.",
        { default: [], example: ["server", "x-powered-by"] },
      ),
    },
  },
  basic_auth: {
    doc: "HTTP Basic authentication against an htpasswd file (bcrypt or Argon2 hashes only, " +
      "`htpasswd -B`); the user name becomes `auth.subject`.",
    fields: {
      htpasswd_path: field("string", text(), "htpasswd file, read at load and on every reload.", {
        path: "config",
        required: true,
        example: "users.htpasswd",
      }),
      realm: realmField("radiology"),
      forward_credentials: forwardCredentials("the Authorization header"),
      address_checks_per_minute: field(
        "integer",
        int(1, 1_000_000),
        "Password checks one client address may cause per minute (remembered answers are " +
          "free); beyond them 429 `too_many_password_checks`, before any hashing.",
        { default: 30, example: 120 },
      ),
      address_check_burst: field(
        "integer",
        int(1, 100_000),
        "Password checks one client address may cause at once, before the per-minute rate.",
        { default: 10, example: 50 },
      ),
      max_addresses: field(
        "integer",
        int(1, 1_000_000),
        "Client addresses whose check budgets are kept (least recently used forgotten).",
        { default: 10_000, example: 100_000 },
      ),
    },
  },
};

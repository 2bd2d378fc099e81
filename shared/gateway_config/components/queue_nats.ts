/**
 * The NATS JetStream store of a backend's delivery queue (`[backends.<name>.queue]` with
 * `store = "nats"`, docs/delivery.md and docs/scaling.md): the keys it adds to the queue table,
 * and the checks between them. The file store stays the default; its keys (`dir`, `fsync`) do
 * not apply to a `nats` store, nor the `nats_*` keys to a `file` one.
 */
import { z } from "zod";
import { childPath, field, type ProblemSink, type TableSpec } from "../fields.ts";
import { int, positive, text } from "../values.ts";

/** Where a queue keeps its messages. */
export const QUEUE_STORES = ["file", "nats"] as const;

/** A NATS server URL: `nats://` or `tls://` with a host and a port, no credentials in it. */
const natsUrl = () =>
  text().max(2048).superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      ctx.addIssue({ code: "custom", message: "must be a nats:// or tls:// URL" });
      return;
    }
    if ((url.protocol !== "nats:" && url.protocol !== "tls:") || url.hostname === "") {
      ctx.addIssue({ code: "custom", message: "must be a nats:// or tls:// URL with a host" });
    } else if (url.username !== "" || url.password !== "") {
      ctx.addIssue({
        code: "custom",
        message: "must not hold credentials: set `nats_user` and `nats_password`, `nats_token`, " +
          "`nats_creds_file` or `nats_nkey_file`",
      });
    } else if ((url.pathname !== "" && url.pathname !== "/") || url.search || url.hash) {
      ctx.addIssue({ code: "custom", message: "must be only a scheme, a host and a port" });
    }
  });

/** A JetStream stream or bucket name: letters, digits, `_` and `-`. */
const streamName = () =>
  z.string().regex(/^[A-Za-z0-9_-]{1,200}$/, "letters, digits, `_` and `-` only (at most 200)");

/** A subject prefix: dot-separated tokens of letters, digits, `_` and `-` (no wildcards). */
const subjectPrefix = () =>
  z.string().regex(
    /^[A-Za-z0-9_-]{1,64}(\.[A-Za-z0-9_-]{1,64}){0,15}$/,
    "dot-separated tokens of letters, digits, `_` and `-` (no wildcards)",
  );

/** The key of the queue table that chooses the store. */
export const QUEUE_STORE_FIELD: TableSpec = {
  store: field(
    "string",
    z.enum(QUEUE_STORES),
    "`file`: the messages are files in `dir` on this gateway's disk. `nats`: they are in a NATS " +
      "JetStream stream that every gateway of a cluster shares (any of them delivers, a message " +
      "survives the gateway that accepted it; docs/scaling.md); the `nats_*` keys apply.",
    { default: "file", example: "nats" },
  ),
};

/** Defaults of the `nats_*` keys (applied by the store, so that a file queue carries none). */
export const QUEUE_NATS_DEFAULTS = {
  nats_replicas: 1,
  nats_max_payload: 1_048_576,
  nats_ack_wait_secs: 30,
  nats_timeout_secs: 10,
} as const;

/** The keys of the queue table that configure a `nats` store. */
export const QUEUE_NATS_FIELDS: TableSpec = {
  nats_servers: field(
    "array of strings",
    z.array(natsUrl()).min(1).max(64),
    "The NATS servers to connect to (`nats://host:4222`, or `tls://` for TLS); the client also " +
      "learns the rest of the cluster from them.",
    { requiredWhen: '`store = "nats"`', example: ["nats://nats-1:4222", "nats://nats-2:4222"] },
  ),
  nats_stream: field(
    "string",
    streamName(),
    "The JetStream stream of the waiting messages (work-queue retention); the dead letters are " +
      "in `<stream>_DEAD` and bodies over `nats_max_payload` in the object store bucket " +
      "`<stream>_BODIES`. Gateways configured with the same stream share the queue.",
    { defaultDoc: "`GATEWAY_QUEUE_<BACKEND>` (the backend's name upper-cased)", example: "PACS_Q" },
  ),
  nats_subject: field(
    "string",
    subjectPrefix(),
    "Subject prefix of the queue: messages are published to `<prefix>.msg.<id>`, dead letters to " +
      "`<prefix>.dead.<id>`.",
    { defaultDoc: "`gateway.queue.<backend>`", example: "hospital.pacs" },
  ),
  nats_replicas: field(
    "integer",
    int(1, 5),
    "Copies JetStream keeps of each message (the streams' replication): a message is " +
      "acknowledged to the sender once that many servers hold it. 3 in a 3-server cluster " +
      "survives the loss of one server.",
    { defaultDoc: "`1`", example: 3 },
  ),
  nats_max_payload: field(
    "integer",
    int(1024, 64 * 1024 * 1024),
    "Largest body kept in the stream's message itself; a larger one is put in the object store " +
      "bucket (in chunks) and the message points at it. At most the servers' `max_payload` less " +
      "the message's header.",
    { defaultDoc: "`1048576` (1 MiB)", example: 262_144 },
  ),
  nats_ack_wait_secs: field(
    "number",
    positive(),
    "A delivery that its gateway stops confirming (the gateway died) is handed to another " +
      "gateway after this long; a running delivery is confirmed every third of it.",
    { defaultDoc: "`30`", example: 10 },
  ),
  nats_timeout_secs: field(
    "number",
    positive(),
    "Time allowed for connecting and for each request to JetStream (a publish waiting for its " +
      "replicas); beyond, the sender gets 503 `queue_unavailable`.",
    { defaultDoc: "`10`", example: 5 },
  ),
  nats_user: field("string", text(), "User name (with `nats_password`).", {
    example: "gateway",
  }),
  nats_password: field("string", text(), "Password of `nats_user`, as `${VAR}`.", {
    secret: true,
    example: "${NATS_PASSWORD}",
  }),
  nats_token: field("string", text(), "Authentication token, as `${VAR}`.", {
    secret: true,
    example: "${NATS_TOKEN}",
  }),
  nats_creds_file: field(
    "string",
    text(),
    "A `.creds` file (a user JWT and its NKey seed, as `nsc` writes them).",
    { path: "config", example: "/etc/gateway/nats/gateway.creds" },
  ),
  nats_nkey_file: field(
    "string",
    text(),
    "A file holding an NKey user seed (`SU…`); the server knows its public key.",
    { path: "config", example: "/etc/gateway/nats/gateway.nk" },
  ),
  nats_ca_path: field(
    "string",
    text(),
    "PEM CA bundle the servers' certificates are checked against (TLS); without it the " +
      "system's roots.",
    { path: "config", example: "/etc/gateway/nats/ca.pem" },
  ),
  nats_cert_path: field(
    "string",
    text(),
    "PEM client certificate for servers that verify clients (with `nats_key_path`).",
    { path: "config", example: "/etc/gateway/nats/client.pem" },
  ),
  nats_key_path: field("string", text(), "PEM private key of `nats_cert_path`.", {
    path: "config",
    example: "/etc/gateway/nats/client-key.pem",
  }),
};

/** The keys that only a `nats` store reads. */
const NATS_KEYS = Object.keys(QUEUE_NATS_FIELDS);
/** The keys that only a `file` store reads. */
const FILE_KEYS = ["dir", "fsync"];

/**
 * The checks between the store keys of a queue table (`raw` as written, at `path`): a `nats`
 * store needs its servers, takes one kind of credential and no file-store keys; a `file` store
 * takes no `nats_*` keys.
 */
export function checkQueueStore(
  sink: ProblemSink,
  raw: Record<string, unknown>,
  path: string,
): void {
  const store = raw.store ?? "file";
  const written = (keys: string[]) => keys.filter((k) => Object.hasOwn(raw, k));
  if (store === "nats") {
    if (raw.nats_servers === undefined) {
      sink.report(
        childPath(path, "nats_servers"),
        'missing `nats_servers`: store = "nats" needs the servers, e.g. ["nats://nats-1:4222"]',
      );
    }
    for (const key of written(FILE_KEYS)) {
      sink.report(
        childPath(path, key),
        `applies only to store = "file" (JetStream keeps a nats queue)`,
      );
    }
    const kinds = [
      raw.nats_user !== undefined || raw.nats_password !== undefined ? "nats_user" : undefined,
      raw.nats_token !== undefined ? "nats_token" : undefined,
      raw.nats_creds_file !== undefined ? "nats_creds_file" : undefined,
      raw.nats_nkey_file !== undefined ? "nats_nkey_file" : undefined,
    ].filter((k) => k !== undefined);
    if (kinds.length > 1) {
      sink.report(
        childPath(path, kinds[1]!),
        `set one way of authenticating to NATS, not ${kinds.join(" and ")}`,
      );
    }
    if ((raw.nats_user === undefined) !== (raw.nats_password === undefined)) {
      sink.report(
        childPath(path, raw.nats_user === undefined ? "nats_user" : "nats_password"),
        "`nats_user` and `nats_password` go together",
      );
    }
    if ((raw.nats_cert_path === undefined) !== (raw.nats_key_path === undefined)) {
      sink.report(
        childPath(path, raw.nats_cert_path === undefined ? "nats_cert_path" : "nats_key_path"),
        "`nats_cert_path` and `nats_key_path` go together",
      );
    }
  } else {
    for (const key of written(NATS_KEYS)) {
      sink.report(childPath(path, key), `applies only to store = "nats"`);
    }
  }
}

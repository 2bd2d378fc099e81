/**
 * The `hl7` backend type: an HL7 v2 receiver reached over MLLP (TCP or TLS); its options table,
 * as the registry (components/mod.ts) lists it.
 */
import { z } from "zod";
import type { BackendOwner, ComponentType } from "../component_type.ts";
import { field } from "../fields.ts";
import { int, port, text } from "../values.ts";
import { bothOrNeither, onlyWhen } from "./rules.ts";

/** `host:port`, or `[IPv6]:port`. */
const hostPort = () =>
  text().regex(/^(\[[0-9A-Fa-f:.]+\]|[^\s:\[\]]+):\d{1,5}$/, "must be host:port").refine(
    (v) => {
      const port = Number(v.slice(v.lastIndexOf(":") + 1));
      return port >= 1 && port <= 65_535;
    },
    "the port must be 1 to 65535",
  );

/** `service = "hl7"`: the type's option schema. */
export const hl7Backend: ComponentType<BackendOwner> = {
  kind: "backend",
  name: "hl7",
  doc: "HL7 v2 receiver over MLLP: sends each message on a pooled connection and waits for its " +
    "ACK (AA/CA: success with the ACK as body; AE/AR/CE/CR: 502 with the ERR text).",
  fields: {
    host: field("string", text(), "Receiver's hostname or IP.", {
      required: true,
      example: "hl7.hospital.internal",
    }),
    port: field("integer", port(), "Receiver's MLLP port.", { required: true, example: 2575 }),
    failover: field(
      "array of strings",
      z.array(hostPort()),
      "Other receivers (`host:port`, IPv6 as `[addr]:port`), tried in this order when a " +
        "connection to `host` cannot be opened (refused, timed out, TLS failed); a receiver that " +
        "failed is passed over for the backend's `cooldown_secs`, then `host` is preferred " +
        "again. Only connecting fails over: a message once written is never sent elsewhere.",
      { example: ["lis-backup.hospital.internal:6661"] },
    ),
    use_tls: field("boolean", z.boolean(), "MLLP over TLS to the receiver.", {
      default: false,
      example: true,
    }),
    ca_cert_path: field(
      "string",
      text(),
      "PEM CA certificate(s) the receiver's certificate must chain to (with `use_tls`; default " +
        "the system's roots).",
      { path: "config", example: "certs/hl7-ca.pem" },
    ),
    cert_path: field("string", text(), "PEM client certificate (with `use_tls`).", {
      path: "config",
      example: "certs/gateway.pem",
    }),
    key_path: field("string", text(), "PEM client key (with `use_tls`).", {
      path: "config",
      example: "certs/gateway-key.pem",
    }),
    pool_size: field(
      "integer",
      int(1, 64),
      "Connections kept to the receiver. Each carries one message at a time and waits for its " +
        "ACK, so 1 keeps the order of concurrent requests; more send that many at once.",
      { default: 1, example: 4 },
    ),
    connect_timeout_secs: field(
      "integer",
      int(1, 300),
      "Seconds to open a connection (TCP and TLS).",
      { default: 10, example: 5 },
    ),
    ack_timeout_secs: field(
      "integer",
      int(1, 3600),
      "Seconds to wait for the ACK of a sent message; past it the message is reported failed " +
        "(504) and the connection closed, never sent again by the backend itself.",
      { default: 30, example: 60 },
    ),
    idle_secs: field(
      "integer",
      int(0, 86_400),
      "Seconds an idle connection stays open for the next message; 0 closes it after each ACK.",
      { default: 60, example: 300 },
    ),
    max_message_bytes: field(
      "integer",
      int(1024, 1024 * 1024 * 1024),
      "Largest message sent and largest ACK accepted, in bytes.",
      { default: 4 * 1024 * 1024, example: 1_048_576 },
    ),
    messages_per_connection: field(
      "integer",
      int(0),
      "Messages sent on one connection before it is closed and a new one opened; 0 for no " +
        "limit. 1 suits receivers that mishandle several messages on a connection.",
      { default: 0, example: 1 },
    ),
  },
  rules: (o) => [
    ...onlyWhen(
      o,
      ["ca_cert_path", "cert_path", "key_path"],
      o.use_tls === true,
      "applies only when use_tls = true",
    ),
    ...bothOrNeither(o, "cert_path", "key_path"),
  ],
};

/**
 * The `hl7` endpoint type: an HL7 v2 MLLP listener on its own TCP port (not served by networks),
 * its options table as the registry (components/mod.ts) lists it.
 */
import { z } from "zod";
import type { ComponentType } from "../component_type.ts";
import { field } from "../fields.ts";
import { addressRange, int, port, text } from "../values.ts";
import { bothOrNeither, networkListenerAuthenticates } from "./rules.ts";

/** How the endpoint chooses between original and enhanced acknowledgement. */
export const HL7_ACK_MODES = ["message", "original", "enhanced"] as const;

/** `service = "hl7"`: the type's option schema. */
export const hl7Endpoint: ComponentType = {
  kind: "endpoint",
  name: "hl7",
  doc: "HL7 v2 MLLP listener (its own TCP port; not served by networks): each message goes " +
    "through the pipeline and is answered with an ACK.",
  fields: {
    bind_addr: field("string", text(), "Address the MLLP listener binds.", {
      default: "0.0.0.0",
      example: "127.0.0.1",
    }),
    port: field("integer", port(), "TCP port of the MLLP listener (2575 is HL7's).", {
      default: 2575,
      example: 6661,
    }),
    max_message_bytes: field(
      "integer",
      int(64, 512 * 1024 * 1024),
      "Largest message accepted, in bytes: a larger frame is answered with an `AR` (or `CR`) " +
        "naming the limit and the connection is closed.",
      { default: 1_048_576, example: 4_194_304 },
    ),
    max_batch_messages: field(
      "integer",
      int(1, 1_000_000),
      "Messages accepted in one batch (FHS/BHS) frame; a larger batch is answered with an `AR` " +
        "naming the limit and none of its messages is processed. The batch as a whole counts " +
        "against `max_message_bytes`.",
      { default: 1_000, example: 500 },
    ),
    idle_timeout_secs: field(
      "integer",
      int(1, 86_400),
      "A connection that sends nothing for this long, or does not read its ACK within it, is " +
        "closed.",
      { default: 300, example: 60 },
    ),
    max_connections: field(
      "integer",
      int(1, 100_000),
      "Connections served at once; more are closed as they arrive (with a warning in the log).",
      { default: 100, example: 20 },
    ),
    ack_mode: field(
      "string",
      z.enum(HL7_ACK_MODES),
      "`message`: MSH-15/MSH-16 choose (enhanced acknowledgement when either is set, else " +
        "original); `original`: always one `AA`/`AE`/`AR`; `enhanced`: a commit ACK " +
        "(`CA`/`CE`/`CR`) for messages that set neither, as if MSH-15 were `AL` and MSH-16 `NE`.",
      { default: "message", example: "original" },
    ),
    allowed_sending_facilities: field(
      "array of strings",
      z.array(text()),
      "MSH-4 values accepted (as written, components included); a message from another " +
        "facility is answered `AR`. When absent, any.",
      { example: ["NORTH_HOSPITAL"] },
    ),
    allowed_source_addresses: field(
      "array of strings",
      z.array(addressRange()),
      "Addresses and CIDR ranges (IPv4, IPv6) whose connections are served; any other is " +
        "closed before a byte is read, with a warning in the log. When absent, any.",
      { example: ["10.20.0.0/16", "10.30.4.17"] },
    ),
    allow_unauthenticated: field(
      "boolean",
      z.boolean(),
      "Accept any sender that can connect when `bind_addr` is not loopback and neither " +
        "`tls_client_ca_path` nor `allowed_source_addresses` is set. Without it such a " +
        "configuration is refused: nothing in the protocol itself authenticates a peer.",
      { default: false, example: true },
    ),
    tls_cert_path: field(
      "string",
      text(),
      "PEM certificate chain: with `tls_key_path` the listener speaks MLLP over TLS instead of " +
        "plain TCP.",
      { path: "config", example: "certs/mllp.pem" },
    ),
    tls_key_path: field("string", text(), "PEM private key of `tls_cert_path`.", {
      path: "config",
      example: "certs/mllp-key.pem",
    }),
    tls_client_ca_path: field(
      "string",
      text(),
      "PEM CA certificates: every sender must present a client certificate issued by one of " +
        "them (others are refused in the TLS handshake).",
      { path: "config", example: "certs/senders-ca.pem" },
    ),
  },
  rules: (o) => [
    ...networkListenerAuthenticates(o, "hl7"),
    ...bothOrNeither(o, "tls_cert_path", "tls_key_path"),
    ...(o.tls_client_ca_path !== undefined && o.tls_cert_path === undefined
      ? [{
        key: "tls_client_ca_path",
        message: "client certificates need TLS: set tls_cert_path and tls_key_path too",
      }]
      : []),
  ],
};

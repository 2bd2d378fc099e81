/**
 * The `dicom_scp` endpoint type: its options table, as the registry (components/mod.ts) lists it.
 */
import { z } from "zod";
import type { ComponentType } from "../component_type.ts";
import { field } from "../fields.ts";
import { addressRange, aeTitle, port, text } from "../values.ts";
import { bothOrNeither, networkListenerAuthenticates } from "./rules.ts";

/** `service = "dicom_scp"`: the type's option schema. */
export const dicomScpEndpoint: ComponentType = {
  kind: "endpoint",
  name: "dicom_scp",
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
      "Accept any peer that can connect when `bind_addr` is not loopback and neither " +
        "`tls_client_ca_path` nor `allowed_source_addresses` is set. Without it such a " +
        "configuration is refused: nothing in the protocol itself authenticates a peer.",
      { default: false, example: true },
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
    ...networkListenerAuthenticates(o, "dicom_scp"),
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
};

/**
 * The `http3` backend type: its options table, as the registry (components/mod.ts) lists it.
 */
import type { BackendOwner, ComponentType } from "../component_type.ts";
import { field } from "../fields.ts";
import { absolutePath, hostName, int, port, text } from "../values.ts";
import { authField, authRules } from "./http_family.ts";

/** `service = "http3"`: the type's option schema. */
export const http3Backend: ComponentType<BackendOwner> = {
  kind: "backend",
  name: "http3",
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
};

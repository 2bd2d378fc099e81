/**
 * The `hl7` endpoint type through the registry's readers: validation (defaults, TLS rules, no
 * networks, port collisions), the TOML writer, and the cloud's form inputs and MCP JSON Schema.
 */
import { assert, assertEquals } from "../../../tests/assert.ts";
import { optionInputs, optionJsonSchema } from "../option_inputs.ts";
import { validateConfigText } from "../text.ts";
import { writeConfigToml } from "../writer.ts";

function config(options: string, extra = ""): string {
  return `
[network.main]
port = 8080

[endpoints.adt]
service = "hl7"
${extra}
[endpoints.adt.options]
${options}

[backends.echo]
service = "echo"

[pipelines.hl7]
endpoints = ["adt"]
backends = ["echo"]
`;
}

Deno.test("hl7 endpoint options: defaults applied, written back without them", () => {
  const r = validateConfigText(config(`port = 6661`), "gateway.toml");
  assertEquals(r.problems, []);
  const o = r.config!.endpoints.adt.options;
  assertEquals(
    [o.bind_addr, o.port, o.max_message_bytes, o.idle_timeout_secs, o.max_connections, o.ack_mode],
    ["0.0.0.0", 6661, 1_048_576, 300, 100, "message"],
  );
  const toml = writeConfigToml(r.config!);
  assert(toml.includes("port = 6661") && !toml.includes("ack_mode"), toml);
  assertEquals(validateConfigText(toml, "gateway.toml").config, r.config);
});

Deno.test("hl7 endpoint options: TLS pairs, ack_mode values, networks and port collisions", () => {
  const messages = (text: string) =>
    validateConfigText(text, "gateway.toml").problems.map((p) => `${p.path}: ${p.message}`);
  assert(
    messages(config(`tls_cert_path = "a.pem"`)).some((m) =>
      m.startsWith("endpoints.adt.options.tls_key_path")
    ),
  );
  assert(
    messages(config(`tls_client_ca_path = "ca.pem"`)).some((m) =>
      m.includes("client certificates need TLS")
    ),
  );
  assert(messages(config(`ack_mode = "always"`)).some((m) => m.includes('"enhanced"')));
  assert(
    messages(config(`port = 6661`, `networks = ["main"]`)).some((m) =>
      m.includes("hl7 endpoints listen on their own bind_addr and port")
    ),
  );
  assert(
    messages(config(`port = 8080`)).some((m) => m.includes("hl7 endpoint `adt`")),
    "the endpoint's port collides with network main's",
  );
});

Deno.test("hl7 endpoint options: the cloud's form inputs and the MCP JSON Schema", () => {
  const inputs = optionInputs("endpoint", "hl7")!;
  const byKey = Object.fromEntries(inputs.map((i) => [i.key, i]));
  assertEquals(byKey.ack_mode.control, "select");
  assertEquals(byKey.ack_mode.choices, ["message", "original", "enhanced"]);
  assertEquals(byKey.port.control, "integer");
  assertEquals(byKey.allowed_sending_facilities.control, "lines");
  const schema = optionJsonSchema("endpoint", "hl7")!;
  const props = schema.properties as Record<string, { enum?: unknown[]; type?: string }>;
  assertEquals(props.ack_mode.enum, ["message", "original", "enhanced"]);
  assertEquals(props.max_message_bytes.type, "integer");
});

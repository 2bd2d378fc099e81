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
  const r = validateConfigText(
    config(`port = 6661\nallowed_source_addresses = ["10.0.0.0/8"]`),
    "gateway.toml",
  );
  assertEquals(r.problems, []);
  const o = r.config!.endpoints.adt.options;
  assertEquals(
    [
      o.bind_addr,
      o.port,
      o.max_message_bytes,
      o.idle_timeout_secs,
      o.max_connections,
      o.ack_mode,
      o.allow_unauthenticated,
    ],
    ["0.0.0.0", 6661, 1_048_576, 300, 100, "message", false],
  );
  const toml = writeConfigToml(r.config!);
  assert(toml.includes("port = 6661") && !toml.includes("ack_mode"), toml);
  assert(!toml.includes("allow_unauthenticated"), toml);
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

Deno.test("hl7 and dicom_scp listeners beyond loopback must authenticate their peers", () => {
  const problems = (service: string, options: string) =>
    validateConfigText(
      `[endpoints.in]\nservice = "${service}"\n[endpoints.in.options]\n${options}\n` +
        `[backends.echo]\nservice = "echo"\n[pipelines.p]\nendpoints = ["in"]\n` +
        `backends = ["echo"]\n`,
      "gateway.toml",
    ).problems.map((p) => `${p.path}: ${p.message}`);
  for (const [service, base] of [["hl7", ""], ["dicom_scp", `local_aet = "GW"`]]) {
    // The default bind (0.0.0.0), a routable address and a wildcard IPv6 one: refused, naming
    // the key and the three ways out.
    for (const bind of ["", `bind_addr = "10.1.2.3"`, `bind_addr = "::"`]) {
      const found = problems(service, `${base}\n${bind}`);
      assertEquals(found.length, 1, `${service} ${bind}: ${found}`);
      assert(found[0].startsWith("endpoints.in.options.bind_addr: "), found[0]);
      for (
        const way of ["tls_client_ca_path", "allowed_source_addresses", "allow_unauthenticated"]
      ) {
        assert(found[0].includes(way), found[0]);
      }
    }
    // Loopback needs nothing; each way out is enough on its own.
    for (
      const ok of [
        `bind_addr = "127.0.0.1"`,
        `bind_addr = "::1"`,
        `bind_addr = "localhost"`,
        `allowed_source_addresses = ["10.20.0.0/16", "fd00::/8"]`,
        `allow_unauthenticated = true`,
        `tls_cert_path = "c.pem"\ntls_key_path = "k.pem"\ntls_client_ca_path = "ca.pem"`,
      ]
    ) {
      assertEquals(problems(service, `${base}\n${ok}`), [], `${service} ${ok}`);
    }
    // TLS without client certificates proves nothing about the peer; an empty allow-list allows
    // nobody yet is no decision either; a malformed range is named.
    assertEquals(
      problems(service, `${base}\ntls_cert_path = "c.pem"\ntls_key_path = "k.pem"`).length,
      1,
    );
    assertEquals(problems(service, `${base}\nallowed_source_addresses = []`).length, 1);
    assert(
      problems(service, `${base}\nallowed_source_addresses = ["10.0.0"]`).some((m) =>
        m.includes("CIDR range")
      ),
    );
  }
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

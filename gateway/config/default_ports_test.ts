import assert from "node:assert/strict";
import { chooseDefaultPorts } from "./default_ports.ts";

const env = (vars: Record<string, string>) => (name: string) => vars[name];

Deno.test("chooseDefaultPorts: flags, else GATEWAY_PORT / GATEWAY_MANAGEMENT_PORT, else none", () => {
  assert.deepEqual(chooseDefaultPorts({}, env({}), false), { ok: true, ports: {} });
  assert.deepEqual(
    chooseDefaultPorts({ port: "8081", "management-port": "9091" }, env({}), false),
    { ok: true, ports: { port: 8081, managementPort: 9091 } },
  );
  const vars = env({ GATEWAY_PORT: "18080", GATEWAY_MANAGEMENT_PORT: " 19090 " });
  assert.deepEqual(chooseDefaultPorts({}, vars, false), {
    ok: true,
    ports: { port: 18080, managementPort: 19090 },
  });
  // A flag wins over its variable.
  assert.deepEqual(chooseDefaultPorts({ port: "8082" }, vars, false), {
    ok: true,
    ports: { port: 8082, managementPort: 19090 },
  });
});

Deno.test("chooseDefaultPorts: a value that is not a port names where it came from", () => {
  for (
    const [flags, vars, problem] of [
      [{ port: "80a" }, {}, '--port: expected a TCP port (1-65535), found "80a"'],
      [{ port: "0" }, {}, '--port: expected a TCP port (1-65535), found "0"'],
      [{ "management-port": "65536" }, {}, "--management-port: expected a TCP port"],
      [{}, { GATEWAY_MANAGEMENT_PORT: "-1" }, "GATEWAY_MANAGEMENT_PORT: expected a TCP port"],
    ] as const
  ) {
    const choice = chooseDefaultPorts(flags, env(vars), false);
    assert.equal(choice.ok, false);
    assert.ok(!choice.ok && choice.problem.startsWith(problem), JSON.stringify(choice));
  }
});

Deno.test("chooseDefaultPorts: with --config the flags are refused and the variables ignored", () => {
  const refused = chooseDefaultPorts({ "management-port": "9091" }, env({}), true);
  assert.ok(
    !refused.ok && /--management-port applies to the embedded default only/.test(
      refused.problem,
    ),
  );
  assert.deepEqual(chooseDefaultPorts({}, env({ GATEWAY_PORT: "8081" }), true), {
    ok: true,
    ports: {},
    note: "GATEWAY_PORT ignored: --config names its own ports",
  });
  assert.deepEqual(chooseDefaultPorts({}, env({}), true), { ok: true, ports: {} });
});

/**
 * gwcli against a real gateway process: gateway:add, list, info, pipelines, routes (table and
 * --json), reload (accepted and refused), update while the cloud is disabled, a wrong prefix, and
 * remove.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { expectExit, type GwcliHome, withGwcliHome } from "./gwcli_support.ts";
import { freePort, startGateway } from "./support/mod.ts";

function gatewayConfig(dataPort: number, mgmtPort: number, backend = "echo"): string {
  return `
[network.main]
bind = "127.0.0.1"
port = ${dataPort}

[management]
bind = "127.0.0.1"
port = ${mgmtPort}
prefix = "ops"

[endpoints.echo_in]
service = "http"
[endpoints.echo_in.options]
path_prefix = "/echo"

[endpoints.fhir_in]
service = "fhir"
[endpoints.fhir_in.options]
path_prefix = "/fhir"

[backends.echo]
service = "echo"

[backends.hapi]
service = "fhir"
targets = ["hapi1"]

[targets.hapi1]
url = "http://127.0.0.1:1/fhir"

[pipelines.echo]
endpoints = ["echo_in"]
backends = ["${backend}"]

[pipelines.fhir]
endpoints = ["fhir_in"]
backends = ["hapi"]
`;
}

async function run(home: GwcliHome, args: string[], code = 0) {
  return expectExit(await home.run(args), code, `gwcli ${args.join(" ")}`);
}

Deno.test("gwcli against a running gateway: add, list, info, pipelines, routes, reload, update, remove", async () => {
  const dataPort = freePort();
  const mgmtPort = freePort();
  await withGwcliHome(async (home) => {
    // The gateway generates its management token and, for tools of the same user on this host,
    // writes where it is; gwcli finds it with no extra step.
    await using gateway = await startGateway({
      configText: gatewayConfig(dataPort, mgmtPort),
      env: { HOME: home.home, GATEWAY_MANAGEMENT_TOKEN: "" },
    });
    const tokenFile = `${gateway.dir}/state/management-token`;
    assertEquals((await Deno.stat(tokenFile)).mode! & 0o777, 0o600);
    const discovery = `${home.home}/.local/state/healthcare-gateway/management/${mgmtPort}.json`;
    assertEquals((await Deno.stat(discovery)).mode! & 0o777, 0o600);
    assertEquals(JSON.parse(await Deno.readTextFile(discovery)).token_file, tokenFile);
    assert(!(await Deno.readTextFile(discovery)).includes(gateway.mgmtToken), "no token in it");
    const added = await run(home, [
      "gateway:add",
      "-p",
      String(mgmtPort),
      "-x",
      "ops",
      "-l",
      "local",
    ]);
    const [, id] = added.stdout.match(/\(([0-9a-f]{6})\)/)!;
    assertMatch((await run(home, ["gateway:list"])).stdout, new RegExp(`│ ${id} +│ - +│ local +│`));

    const info = (await run(home, ["gateway:info", "-l", "local"])).stdout;
    assertMatch(
      info,
      new RegExp(`│ Instance +│ 'local' \\(${id}\\) http://127\\.0\\.0\\.1:${mgmtPort}/ops +│`),
    );
    assertMatch(info, /│ Name +│ gateway +│/);
    assertMatch(info, /│ Version +│ \d+\.\d+\.\d+ +│/);
    assertMatch(info, new RegExp(`│ PID +│ ${gateway.pid} +│`));
    assertMatch(info, new RegExp(`│ Config file +│ ${gateway.configPath} +│`));
    assertMatch(info, /│ Cloud +│ disabled +│/);
    assertMatch(info, new RegExp(`│ Listeners +│ main: 127\\.0\\.0\\.1:${dataPort} +│`));
    assertMatch(info, new RegExp(`│ Management +│ 127\\.0\\.0\\.1:${mgmtPort}, prefix ops +│`));
    assertEquals(
      (await run(home, ["gateway:info", "--id", id])).stdout.split("\n")[0],
      info.split("\n")[0],
    );
    await run(home, ["gateway:info"]);

    const pipelines = (await run(home, ["gateway:pipelines", "--id", id])).stdout;
    assertMatch(pipelines, /│ PIPELINE +│ ENDPOINTS +│ MIDDLEWARE +│ BACKENDS +│/);
    assertMatch(pipelines, /│ echo +│ echo_in +│ - +│ echo \[echo\] +│/);
    assertMatch(pipelines, /│ fhir +│ fhir_in +│ - +│ hapi \[fhir\] +│/);
    assertMatch(pipelines, /hapi1 http:\/\/127\.0\.0\.1:1\/fhir \(healthy\)/);

    const routes = (await run(home, ["gateway:routes", "-l", "local"])).stdout;
    assertMatch(routes, /│ PATH +│ METHODS +│ ENDPOINT +│ SERVICE +│ PIPELINE +│ NETWORKS +│/);
    assertMatch(routes, /│ \/echo +│ \* +│ echo_in +│ http +│ echo +│ main +│/);
    assertMatch(routes, /│ \/fhir +│ \* +│ fhir_in +│ fhir +│ fhir +│ main +│/);
    const json = (await run(home, ["gateway:routes", "-l", "local", "--json"])).stdout;
    const direct = await (await gateway.mgmtFetch("/ops/routes")).json();
    assertEquals(JSON.parse(json), direct, "--json prints the management API's body");

    const reloaded = await run(home, ["gateway:reload", "-l", "local", "-v"]);
    assertMatch(
      reloaded.stdout,
      /^Reloaded 'local' \([0-9a-f]{6}\): generation \d+ is serving in [\d.]+ ms\.\n$/,
    );
    assertMatch(
      reloaded.stderr,
      new RegExp(`^\\* POST http://127\\.0\\.0\\.1:${mgmtPort}/api/reload$`, "m"),
    );

    await Deno.writeTextFile(gateway.configPath, gatewayConfig(dataPort, mgmtPort, "missing"));
    const refused = await run(home, ["gateway:reload", "-l", "local"], 1);
    assertMatch(
      refused.stderr,
      /'local' \([0-9a-f]{6}\) refused the new configuration; generation \d+ keeps running:/,
    );
    assertMatch(refused.stderr, /pipelines\.echo\.backends.*missing/);
    await Deno.writeTextFile(gateway.configPath, gatewayConfig(dataPort, mgmtPort));
    await run(home, ["gateway:reload", "-l", "local"]);

    const update = await run(home, ["gateway:update", "-l", "local"], 1);
    assertMatch(
      update.stderr,
      /answered POST \/ops\/update with 403: cloud integration is disabled/,
    );
    assertMatch(update.stderr, /cloud_disabled, request id [0-9a-f-]+/);
    assertMatch(
      update.stderr,
      /Enable it: set `\[cloud\] enabled = true`.*gwcli gateway:reload --id/,
    );

    const other = `${home.home}/wrong-prefix`;
    const wrong = (args: string[]) => home.run(args, { env: { GWCLI_HOME: other } });
    expectExit(await wrong(["gateway:add", "-p", String(mgmtPort)]), 0);
    const notFound = expectExit(await wrong(["gateway:info"]), 1);
    assertMatch(notFound.stderr, /answered GET \/admin\/info with 404/);
    assertMatch(notFound.stderr, /Is 'admin' the gateway's management prefix\?/);

    assertMatch(
      (await run(home, ["gateway:remove", "-l", "local"])).stdout,
      /Removed instance 'local'/,
    );
    assert((await run(home, ["gateway:list"])).stdout.includes("No gateway instance"));
  });
});

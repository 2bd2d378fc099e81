/**
 * gwcli gateway:authorize and gateway:update end to end: the real cloud service (in this process),
 * a real gateway process with `[cloud] enabled = true`, and gwcli as a subprocess.
 *
 * The gateway side (`POST /{prefix}/token`, `POST /{prefix}/update`, `info.cloud`) follows the
 * contract of gateway/cloud: `/token` answers `{"stored":true,"gateway_id","gateway_code",
 * "expires_at","persisted"}`, `/update` answers `{"uploaded_bytes":N,…}`.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { call, makeUser, withCloud } from "./cloud_harness.ts";
import { expectExit, type GwcliHome, seedLogin, withGwcliHome } from "./gwcli_support.ts";
import { freePort, startGateway, TEST_MANAGEMENT_TOKEN } from "./support/mod.ts";

function gatewayConfig(mgmtPort: number, cloud: string): string {
  return `
${cloud}

[network.main]
bind = "127.0.0.1"
port = ${freePort()}

[management]
bind = "127.0.0.1"
port = ${mgmtPort}

[endpoints.echo_in]
service = "http"
[endpoints.echo_in.options]
path_prefix = "/echo"

[backends.echo]
service = "echo"

[pipelines.echo]
endpoints = ["echo_in"]
backends = ["echo"]
`;
}

async function run(home: GwcliHome, args: string[], code = 0) {
  return expectExit(await home.run(args), code, `gwcli ${args.join(" ")}`);
}

Deno.test("gwcli gateway:authorize and gateway:update: cloud + gateway end to end", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const mgmtPort = freePort();
    await using _gateway = await startGateway({
      configText: gatewayConfig(
        mgmtPort,
        `[cloud]\nenabled = true\nurl = "${cloud.url}"\ngateway_code = "edge-e2e"`,
      ),
    });
    await withGwcliHome(async (home) => {
      // The operator points gwcli at the gateway's token file once, at registration.
      const tokenFile = `${home.home}/management-token`;
      await Deno.writeTextFile(tokenFile, `${TEST_MANAGEMENT_TOKEN}\n`, { mode: 0o600 });
      await run(home, ["gateway:add", "-p", String(mgmtPort), "-l", "edge", "-t", tokenFile]);
      const notLoggedIn = await run(home, ["gateway:authorize", "-l", "edge", "-y"], 3);
      assertMatch(notLoggedIn.stderr, /not logged in/);

      await seedLogin(home, cloud.url, ada.userToken);
      const wrongCode = await run(home, ["gateway:authorize", "-l", "edge", "-g", "other"], 2);
      assertMatch(wrongCode.stderr, /configured with gateway code 'edge-e2e', not 'other'/);

      const authorized = await run(home, ["gateway:authorize", "-l", "edge", "-y"]);
      const gw = await cloud.server.services.store.repos.gateways.findByUnique(
        ada.team.id,
        "edge-e2e",
      );
      assert(gw, "the cloud created the gateway");
      assertMatch(
        authorized.stdout,
        new RegExp(`Created gateway 'edge-e2e' \\(${gw.id}\\) in the cloud \\(team Radiology\\)`),
      );
      assertMatch(
        authorized.stdout,
        new RegExp(
          `Authorized 'edge' \\([0-9a-f]{6}\\) as gateway 'edge-e2e' \\(${gw.id}\\); ` +
            "the machine token expires at \\d{4}-",
        ),
      );
      assertMatch(authorized.stdout, /Configuration upload skipped; run `gwcli gateway:update/);
      assertMatch(authorized.stderr, /keeps the token in memory only.*GATEWAY_ENCRYPTION_KEY/);
      assert(!authorized.stdout.includes("eyJ"), "the machine token is never printed");

      const registry = JSON.parse(await Deno.readTextFile(`${home.dir}/instances.json`));
      assertEquals(registry.instances[0].gateway_id, gw.id, "the gateway id is stored locally");
      assertMatch((await run(home, ["gateway:list"])).stdout, new RegExp(`│ ${gw.id} +│ edge +│`));
      const info = (await run(home, ["gateway:info", "-l", "edge"])).stdout;
      assertMatch(info, new RegExp(`│ Cloud +│ enabled, ${cloud.url} +│`));
      assertMatch(info, /│ Gateway code +│ edge-e2e +│/);
      assertMatch(info, new RegExp(`│ Gateway id +│ ${gw.id} +│`));
      assertMatch(info, /│ Machine token +│ held, expires \d{4}-.*, in memory only/);

      const update = await run(home, ["gateway:update", "-l", "edge"]);
      const [, bytes] = update.stdout.match(
        /^Uploaded .* \((\d+) bytes\) of 'edge' \([0-9a-f]{6}\)'s configuration to the cloud service\.\nFiles: .*\/gateway\.toml\n$/,
      )!;
      const view = await call(cloud, "GET", `/api/gateways/${gw.id}`, { token: ada.apiToken });
      assertEquals(view.status, 200);
      assertEquals(
        view.json.reported_config?.size,
        Number(bytes),
        "the cloud has what was uploaded",
      );

      const both = await run(home, ["gateway:authorize", "-l", "edge", "--update", "-y"]);
      assertMatch(both.stdout, /Found gateway 'edge-e2e'/);
      assertMatch(both.stdout, /Authorized 'edge'/);
      assertMatch(both.stdout, /Uploaded .* bytes\) of 'edge'/);
      assert(!both.stdout.includes("upload skipped"));
    }, { GATEWAY_API_URL: cloud.url });
  });
});

Deno.test("gwcli gateway:authorize refuses a gateway whose cloud integration is disabled", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com");
    const mgmtPort = freePort();
    await using _gateway = await startGateway({ configText: gatewayConfig(mgmtPort, "") });
    await withGwcliHome(async (home) => {
      await seedLogin(home, cloud.url, ada.userToken);
      const added = await run(home, ["gateway:add", "-p", String(mgmtPort)]);
      const [, id] = added.stdout.match(/\(([0-9a-f]{6})\)/)!;
      const r = await run(home, ["gateway:authorize", "--id", id, "--update", "-y"], 1);
      assertMatch(r.stderr, /cloud integration is disabled on '127\.0\.0\.1:\d+'/);
      assertMatch(
        r.stderr,
        new RegExp(
          `Enable it: set \`\\[cloud\\] enabled = true\` in the gateway's configuration, run ` +
            `\`gwcli gateway:reload --id ${id}\`, then \`gwcli gateway:authorize --id ${id}\` again\\.`,
        ),
      );
      const gateways = await call(cloud, "GET", "/api/gateways", { token: ada.apiToken });
      assertEquals(
        gateways.json.items?.length ?? gateways.json.length,
        0,
        "no gateway was created",
      );
      const registry = JSON.parse(await Deno.readTextFile(`${home.dir}/instances.json`));
      assertEquals(registry.instances[0].gateway_id, null);
    }, { GATEWAY_API_URL: cloud.url, GWCLI_MANAGEMENT_TOKEN: TEST_MANAGEMENT_TOKEN });
  });
});

Deno.test("gwcli gateway:authorize with an API token (GWCLI_API_TOKEN or --token-file), no login", async () => {
  await withCloud(async (cloud) => {
    const ada = await makeUser(cloud, "ada@example.com", "Radiology");
    const mgmtPort = freePort();
    await using _gateway = await startGateway({
      configText: gatewayConfig(
        mgmtPort,
        `[cloud]\nenabled = true\nurl = "${cloud.url}"\ngateway_code = "edge-ci"`,
      ),
    });
    await withGwcliHome(async (home) => {
      const mgmtFile = `${home.home}/management-token`;
      await Deno.writeTextFile(mgmtFile, `${TEST_MANAGEMENT_TOKEN}\n`, { mode: 0o600 });
      await run(home, ["gateway:add", "-p", String(mgmtPort), "-l", "edge", "-t", mgmtFile]);

      // CI: the token in the environment, nothing stored, no login, no question (-y).
      const viaEnv = expectExit(
        await home.run(["gateway:authorize", "-l", "edge", "-y"], {
          env: { GWCLI_API_TOKEN: ada.apiToken },
        }),
        0,
        "authorize with GWCLI_API_TOKEN",
      );
      assertMatch(viaEnv.stdout, /Created gateway 'edge-ci' .* in the cloud \(team Radiology\)/);
      assertMatch(viaEnv.stdout, /Authorized 'edge'/);
      assert(!(await Deno.stat(`${home.dir}/credentials.age`).then(() => true, () => false)));

      // The same from a file, with the upload.
      const apiFile = `${home.home}/api-token`;
      await Deno.writeTextFile(apiFile, `${ada.apiToken}\n`, { mode: 0o600 });
      const viaFile = await run(home, [
        "gateway:authorize",
        "-l",
        "edge",
        "--token-file",
        apiFile,
        "--update",
        "--yes",
      ]);
      assertMatch(viaFile.stdout, /Found gateway 'edge-ci'/);
      assertMatch(viaFile.stdout, /Uploaded .* bytes\) of 'edge'/);

      // The management token file given by mistake: refused before anything is sent.
      const wrongFile = await run(home, [
        "gateway:authorize",
        "-l",
        "edge",
        "--token-file",
        mgmtFile,
        "-y",
      ], 2);
      assertMatch(wrongFile.stderr, /does not hold a cloud API token .*nothing was sent/);
      assertMatch(wrongFile.stderr, /management token goes to gateway:add --token-file/);
    }, { GATEWAY_API_URL: cloud.url });
  });
});

/**
 * gwcli end to end without a cloud or gateway: help, version, the command list, global options,
 * configuration precedence, the instance registry with its option conflicts, the deprecated key
 * commands, test-browser, and the files it writes (modes, GWCLI_HOME).
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { expectExit, withGwcliHome } from "./gwcli_support.ts";
import { freePort } from "./support/mod.ts";

const SPEC_COMMANDS = [
  "list",
  "test-browser",
  "login",
  "logout",
  "verify",
  "token:get",
  // Beyond SPEC's list: API tokens without a browser (issue 25).
  "api-token:create",
  "api-token:list",
  "api-token:revoke",
  "config:set",
  "config:get",
  "config:unset",
  // gwcli replaces itself with a signed release (issue 35).
  "self-update",
  "gateway:install",
  "gateway:add",
  "gateway:list",
  "gateway:remove",
  "gateway:info",
  "gateway:pipelines",
  "gateway:routes",
  "gateway:reload",
  "gateway:authorize",
  "gateway:update",
  "gateway:queues",
  "gateway:queue-messages",
  "gateway:queue-retry",
  "gateway:queue-purge",
  "gateway:alerts",
  "messages:search",
  "messages:show",
  "messages:replay",
  "messages:resend",
  "messages:dead-letter",
  "gateway:set-key",
  "gateway:show-key",
  "gateway:delete-key",
];

Deno.test("gwcli: -V, -h, list, unknown commands and the global options", async () => {
  await withGwcliHome(async (home) => {
    // End to end: the `gwcli` task as a subprocess (its exit codes and permissions); the other
    // runs of this file go through runCli in-process.
    const e2e = { subprocess: true };
    const version = expectExit(await home.run(["-V"], e2e), 0);
    assertMatch(version.stdout, /^\d+\.\d+\.\d+\n$/);
    assertEquals((await home.run(["--version"])).stdout, version.stdout);

    const help = expectExit(await home.run(["-h"], e2e), 0);
    assertMatch(help.stdout, /^Usage: gwcli \[options\] \[command\]/);
    for (const flag of ["-V, --version", "-v, --verbose", "-q, --quiet", "-h, --help"]) {
      assert(help.stdout.includes(flag), `help lists ${flag}`);
    }
    assertMatch(help.stdout, /GATEWAY_API_URL/);
    const commandHelp = expectExit(await home.run(["gateway:remove", "--help"]), 0);
    assertMatch(commandHelp.stdout, /Usage: gwcli gateway:remove \[options\]/);
    assertMatch(commandHelp.stdout, /--id <ID>/);

    const list = expectExit(await home.run(["list"]), 0);
    const names = list.stdout.trim().split("\n").slice(1).map((line) => line.split(/\s+/)[0]);
    assertEquals(names, SPEC_COMMANDS);
    assertMatch(list.stdout, /^COMMAND +DESCRIPTION\n/);

    const unknown = expectExit(await home.run(["nope"], e2e), 2);
    assertMatch(unknown.stderr, /unknown command 'nope'/);
    const unknownOption = expectExit(await home.run(["gateway:list", "--bogus"]), 2);
    assertMatch(unknownOption.stderr, /unknown option '--bogus'/);
    expectExit(await home.run([]), 2);

    const both = expectExit(await home.run(["-q", "gateway:list", "-v"]), 2);
    assertMatch(both.stderr, /-q\/--quiet cannot be used with -v\/--verbose/);

    const quiet = expectExit(
      await home.run(["config:set", "api-url", "http://a.example", "-q"]),
      0,
    );
    assertEquals(quiet.stdout, "", "-q drops status lines");
    const loud = expectExit(await home.run(["-v", "config:get", "api-url"]), 0);
    assertEquals(loud.stdout, "http://a.example\n");
    assertMatch(loud.stderr, /^\* api-url comes from the config file$/m);
    const quietResult = expectExit(await home.run(["config:get", "api-url", "--quiet"]), 0);
    assertEquals(quietResult.stdout, "http://a.example\n", "results are printed with -q");
  });
});

Deno.test("gwcli config: file > GATEWAY_API_URL > default, http(s) only, modes and GWCLI_HOME", async () => {
  await withGwcliHome(async (home) => {
    const get = async (env: Record<string, string> = {}) =>
      expectExit(await home.run(["config:get", "api-url"], { env }), 0).stdout.trim();
    assertEquals(await get(), "http://localhost:8000", "default");
    const table = expectExit(await home.run(["config:get"]), 0).stdout;
    assertMatch(table, /KEY +│ VALUE +│ SOURCE/);
    assertMatch(table, /api-url +│ http:\/\/localhost:8000 +│ default/);
    assertEquals(await get({ GATEWAY_API_URL: "https://env.example/" }), "https://env.example");
    const envTable = expectExit(
      await home.run(["config:get"], { env: { GATEWAY_API_URL: "https://env.example" } }),
      0,
    );
    assertMatch(envTable.stdout, /https:\/\/env\.example +│ GATEWAY_API_URL/);

    for (const bad of ["ftp://files.example", "cloud.example", "javascript:alert(1)"]) {
      const refused = expectExit(await home.run(["config:set", "api-url", bad]), 2);
      assertMatch(refused.stderr, /api-url must start with http:\/\/ or https:\/\//);
    }
    assert(!(await exists(`${home.dir}/config.json`)), "nothing written for a refused value");
    expectExit(await home.run(["config:set", "color", "blue"]), 2);
    expectExit(await home.run(["config:get", "color"]), 2);

    const set = expectExit(await home.run(["config:set", "api-url", "https://file.example/"]), 0);
    assertMatch(set.stdout, /api-url = https:\/\/file\.example \(saved in .*config\.json\)/);
    assertEquals(
      JSON.parse(await Deno.readTextFile(`${home.dir}/config.json`)),
      { "api-url": "https://file.example" },
    );
    assertEquals((await Deno.stat(`${home.dir}/config.json`)).mode! & 0o777, 0o600);
    assertEquals((await Deno.stat(home.dir)).mode! & 0o777, 0o700);
    assertEquals(await get({ GATEWAY_API_URL: "https://env.example" }), "https://file.example");

    const unset = expectExit(
      await home.run(["config:unset", "api-url"], {
        env: { GATEWAY_API_URL: "https://env.example" },
      }),
      0,
    );
    assertMatch(unset.stdout, /Removed api-url .*now https:\/\/env\.example \(GATEWAY_API_URL\)/);
    assertEquals(await get(), "http://localhost:8000");
    const again = expectExit(await home.run(["config:unset", "api-url"]), 0);
    assertMatch(again.stdout, /was not set in the config file; it is now http:\/\/localhost:8000/);

    const badEnv = expectExit(
      await home.run(["config:get", "api-url"], { env: { GATEWAY_API_URL: "gopher://x" } }),
      2,
    );
    assertMatch(badEnv.stderr, /GATEWAY_API_URL must start with http/);

    const custom = `${home.home}/profile-b`;
    expectExit(
      await home.run(["config:set", "api-url", "http://b.example"], {
        env: { GWCLI_HOME: custom },
      }),
      0,
    );
    assert(await exists(`${custom}/config.json`), "GWCLI_HOME holds the files");
    assertEquals(await get(), "http://localhost:8000", "the default home is untouched");

    const homeless = expectExit(await home.run(["config:get"], { env: { HOME: "" } }), 1);
    assertMatch(homeless.stderr, /cannot find the home directory/);
  });
});

Deno.test("gwcli gateway:add/list/remove: defaults, validation, conflicts and requirements", async () => {
  await withGwcliHome(async (home) => {
    const empty = expectExit(await home.run(["gateway:list"]), 0);
    assertMatch(empty.stdout, /No gateway instance is registered/);

    const added = expectExit(await home.run(["gateway:add"]), 0);
    const [, id] = added.stdout.match(/Registered instance '127\.0\.0\.1:8081' \(([0-9a-f]{6})\)/)!;
    assertMatch(added.stdout, /http:\/\/127\.0\.0\.1:8081\/admin\n/);
    const keyed = expectExit(
      await home.run([
        "gateway:add",
        "-i",
        "10.0.0.5",
        "-p",
        "9090",
        "-l",
        "edge",
        "-x",
        "/gw/admin/",
        "-k",
        "old",
      ]),
      0,
    );
    assertMatch(keyed.stderr, /-k\/--key is deprecated and ignored/);
    expectExit(
      await home.run(["gateway:add", "--ip", "::1", "--port", "9091", "--path-prefix", "mgmt"]),
      0,
    );

    const registry = JSON.parse(await Deno.readTextFile(`${home.dir}/instances.json`));
    assertEquals(registry.instances[0], {
      id,
      gateway_id: null,
      label: "127.0.0.1:8081",
      ip: "127.0.0.1",
      port: 8081,
      prefix: "admin",
    });
    assertEquals(
      [registry.instances[1].label, registry.instances[1].ip, registry.instances[1].port],
      ["edge", "10.0.0.5", 9090],
    );
    assertEquals(registry.instances[1].prefix, "gw/admin");
    assertEquals(registry.instances[2].label, "[::1]:9091");
    assertEquals((await Deno.stat(`${home.dir}/instances.json`)).mode! & 0o777, 0o600);

    const list = expectExit(await home.run(["gateway:list"]), 0).stdout;
    assertMatch(list, /│ ID +│ GATEWAY_ID +│ LABEL +│ IP +│ PORT +│ PREFIX +│/);
    assertMatch(
      list,
      new RegExp(`│ ${id} +│ - +│ 127\\.0\\.0\\.1:8081 +│ 127\\.0\\.0\\.1 +│ 8081 +│ admin +│`),
    );
    assertMatch(list, /│ edge +│ 10\.0\.0\.5 +│ 9090 +│ gw\/admin +│/);

    const duplicateLabel = expectExit(
      await home.run(["gateway:add", "-p", "1234", "-l", "edge"]),
      1,
    );
    assertMatch(duplicateLabel.stderr, /already labelled 'edge'/);
    const duplicateAddress = expectExit(await home.run(["gateway:add", "-l", "other"]), 1);
    assertMatch(duplicateAddress.stderr, /127\.0\.0\.1:8081 is already registered/);
    assertMatch(
      expectExit(await home.run(["gateway:add", "-p", "70000"]), 2).stderr,
      /invalid port/,
    );
    assertMatch(
      expectExit(await home.run(["gateway:add", "-i", "not an ip"]), 2).stderr,
      /invalid address/,
    );
    assertMatch(
      expectExit(await home.run(["gateway:add", "-x", "a/../b"]), 2).stderr,
      /invalid path prefix/,
    );

    const conflicts: [string[], RegExp][] = [
      [["--id", id, "-l", "edge"], /'--id <ID>' cannot be used with option '-l, --label <LABEL>'/],
      [
        ["--id", id, "-i", "10.0.0.5", "-p", "9090"],
        /'--id <ID>' cannot be used with option '-i, --ip <IP>'/,
      ],
      [
        ["-l", "edge", "-p", "9090", "-i", "10.0.0.5"],
        /'-l, --label <LABEL>' cannot be used with option/,
      ],
      [["-i", "10.0.0.5"], /'-i, --ip <IP>' requires option '-p, --port <PORT>'/],
      [["-p", "9090"], /'-p, --port <PORT>' requires option '-i, --ip <IP>'/],
      [[], /choose the instance to remove/],
    ];
    for (const [args, message] of conflicts) {
      const r = expectExit(
        await home.run(["gateway:remove", ...args]),
        2,
        `remove ${args.join(" ")}`,
      );
      assertMatch(r.stderr, message);
    }
    assertEquals(
      JSON.parse(await Deno.readTextFile(`${home.dir}/instances.json`)).instances.length,
      3,
      "a refused remove changes nothing",
    );
    assertMatch(
      expectExit(await home.run(["gateway:remove", "--id", "ffffff"]), 1).stderr,
      /no instance has id 'ffffff'/,
    );

    const infoConflict = expectExit(await home.run(["gateway:info", "--id", id, "-l", "edge"]), 2);
    assertMatch(infoConflict.stderr, /cannot be used with/);
    const ambiguous = expectExit(await home.run(["gateway:info"]), 2);
    assertMatch(
      ambiguous.stderr,
      /3 instances are registered: choose one with --id or -l\/--label/,
    );

    assertMatch(
      expectExit(await home.run(["gateway:remove", "-i", "10.0.0.5", "-p", "9090"]), 0).stdout,
      /Removed instance 'edge'/,
    );
    assertMatch(
      expectExit(await home.run(["gateway:remove", "-l", "[::1]:9091"]), 0).stdout,
      /Removed/,
    );
    assertMatch(
      expectExit(await home.run(["gateway:remove", "--id", id]), 0).stdout,
      new RegExp(`\\(${id}\\)`),
    );
    assertEquals(JSON.parse(await Deno.readTextFile(`${home.dir}/instances.json`)).instances, []);
  });
});

Deno.test("gwcli gateway:info on an instance that does not answer explains the port mismatch", async () => {
  await withGwcliHome(async (home) => {
    const port = freePort();
    expectExit(await home.run(["gateway:add", "-p", String(port)]), 0);
    const r = expectExit(await home.run(["gateway:info"]), 1);
    assertMatch(
      r.stderr,
      new RegExp(
        `cannot reach gateway .* at http://127\\.0\\.0\\.1:${port}/admin/info: connection refused`,
      ),
    );
    assertMatch(r.stderr, /listens on port 9090 by default, gwcli gateway:add registers 8081/);
    const verbose = expectExit(await home.run(["gateway:pipelines", "-vv"]), 1);
    assertMatch(
      verbose.stderr,
      new RegExp(`^\\* GET http://127\\.0\\.0\\.1:${port}/admin/pipelines$`, "m"),
    );
    assertMatch(verbose.stderr, /^\*\* request headers: accept: application\/json$/m);
  });
});

Deno.test("gwcli deprecated key commands print guidance and change or show nothing", async () => {
  await withGwcliHome(async (home) => {
    expectExit(await home.run(["gateway:add", "-l", "edge"]), 0);
    const before = await Deno.readTextFile(`${home.dir}/instances.json`);
    const runs: [string[], string][] = [
      [["gateway:set-key", "--id", "abc123", "--key", "secret"], "gateway:set-key"],
      [["gateway:show-key", "--id", "abc123"], "gateway:show-key"],
      [["gateway:delete-key", "--id", "abc123"], "gateway:delete-key"],
      [["gateway:show-key"], "gateway:show-key"],
    ];
    for (const [args, name] of runs) {
      const r = expectExit(await home.run(args), 0, name);
      assertEquals(r.stdout, "", `${name} shows nothing`);
      assertMatch(r.stderr, new RegExp(`${name} is deprecated and does nothing`));
      assertMatch(r.stderr, /gwcli gateway:authorize/);
      assert(!r.stderr.includes("secret"), "the given key is not echoed");
    }
    assertEquals(await Deno.readTextFile(`${home.dir}/instances.json`), before);
    assert(!(await exists(`${home.dir}/credentials.age`)));
  });
});

Deno.test("gwcli test-browser opens the api-url with $BROWSER, and fails without a browser", async () => {
  await withGwcliHome(async (home) => {
    const seen = `${home.home}/opened.txt`;
    const script = `${home.home}/browser.sh`;
    await Deno.writeTextFile(script, `#!/bin/sh\nprintf '%s' "$1" > '${seen}'\n`);
    await Deno.chmod(script, 0o755);
    const ok = expectExit(
      await home.run(["test-browser"], {
        env: { BROWSER: script, GWCLI_NO_BROWSER: "", GATEWAY_API_URL: "http://cloud.test:8000" },
      }),
      0,
    );
    assertMatch(ok.stdout, /Opened http:\/\/cloud\.test:8000 in a browser/);
    assertEquals(await Deno.readTextFile(seen), "http://cloud.test:8000");

    const failing = `${home.home}/failing.sh`;
    await Deno.writeTextFile(failing, "#!/bin/sh\nexit 3\n");
    await Deno.chmod(failing, 0o755);
    const failed = expectExit(
      await home.run(["test-browser"], { env: { BROWSER: failing, GWCLI_NO_BROWSER: "" } }),
      1,
    );
    assertMatch(failed.stderr, /could not open a browser: .*failing\.sh exited with code 3/);
    const off = expectExit(await home.run(["test-browser"]), 1);
    assertMatch(off.stderr, /could not open a browser: turned off/);
  });
});

async function exists(path: string): Promise<boolean> {
  try {
    await Deno.stat(path);
    return true;
  } catch {
    return false;
  }
}

Deno.test("gwcli --help lists every command, and every command that asks takes -y/--yes", async () => {
  await withGwcliHome(async (home) => {
    const help = expectExit(await home.run(["--help"]), 0).stdout;
    const section = help.slice(help.indexOf("Commands:"), help.indexOf("Environment:"));
    // A command with an alias is listed as `name|alias`.
    const listed = [...section.matchAll(/^ {2}(\S+)/gm)].map((m) => m[1].split("|")[0]).filter((
      n,
    ) => n !== "help");
    assertEquals(listed, SPEC_COMMANDS, "--help lists exactly the commands of `gwcli list`");
    for (const name of ["gateway:install", "self-update"]) assert(listed.includes(name), name);
    assertEquals(
      expectExit(await home.run(["help"]), 0).stdout,
      help,
      "`gwcli help` is `gwcli --help`",
    );

    // Commands that confirm (a question on a terminal, or a refusal without one) take -y/--yes.
    const asking = ["gateway:authorize", "gateway:queue-purge", "self-update"];
    for (const name of SPEC_COMMANDS) {
      const own = expectExit(await home.run([name, "--help"]), 0).stdout;
      if (asking.includes(name)) {
        assertMatch(own, /-y, --yes/, `${name} takes -y/--yes`);
      } else if (/--yes/.test(own)) {
        assertMatch(own, /-y, --yes/, `${name}: --yes comes with -y`);
      }
    }
    // The commands that call the cloud take an API token file instead of the login.
    for (const name of ["token:get", "gateway:authorize", "api-token:list", "api-token:revoke"]) {
      assertMatch(
        expectExit(await home.run([name, "--help"]), 0).stdout,
        /--token-file <FILE> +file holding a cloud API token/,
        name,
      );
    }
  });
});

Deno.test("gwcli gateway:add -t refuses a token file that is missing or empty; nothing is registered", async () => {
  await withGwcliHome(async (home) => {
    const missing = expectExit(
      await home.run(["gateway:add", "-p", "9090", "-t", `${home.home}/no-such-token`]),
      2,
    );
    assertMatch(
      missing.stderr,
      /-t\/--token-file: cannot read .*no-such-token.*nothing was registered/,
    );
    assertMatch(missing.stderr, /management-token/);
    await Deno.writeTextFile(`${home.home}/empty-token`, " \n");
    const empty = expectExit(
      await home.run(["gateway:add", "-p", "9090", "--token-file", `${home.home}/empty-token`]),
      2,
    );
    assertMatch(empty.stderr, /is empty; nothing was registered/);
    assertMatch(expectExit(await home.run(["gateway:list"]), 0).stdout, /No gateway instance/);

    await Deno.writeTextFile(`${home.home}/token`, "gwm_test\n", { mode: 0o600 });
    const added = expectExit(
      await home.run(["gateway:add", "-p", "9090", "-t", "token"], {}),
      2,
      "a relative path is read from the working directory (the repository here)",
    );
    assertMatch(added.stderr, /cannot read/);
    expectExit(await home.run(["gateway:add", "-p", "9090", "-t", `${home.home}/token`]), 0);
    const registry = JSON.parse(await Deno.readTextFile(`${home.dir}/instances.json`));
    assertEquals(registry.instances[0].token_file, `${home.home}/token`);
    assert(!JSON.stringify(registry).includes("gwm_test"), "only the path is stored");
  });
});

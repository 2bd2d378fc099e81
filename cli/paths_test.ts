import assert from "node:assert/strict";
import { envOf } from "./env.ts";
import { CliError } from "./errors.ts";
import { homeDirectory, joinPath, resolvePaths } from "./paths.ts";

Deno.test("paths: ~/.gwcli from HOME, USERPROFILE on Windows, GWCLI_HOME overrides", () => {
  const fromHome = resolvePaths(envOf({ HOME: "/home/ada" }));
  assert.deepEqual(fromHome, {
    dir: "/home/ada/.gwcli",
    config: "/home/ada/.gwcli/config.json",
    instances: "/home/ada/.gwcli/instances.json",
    credentials: "/home/ada/.gwcli/credentials.age",
    identity: "/home/ada/.gwcli/identity.txt",
    legacyAuth: "/home/ada/.gwcli/auth.json",
  });
  assert.equal(
    resolvePaths(envOf({ HOME: "/home/ada", GWCLI_HOME: "/srv/g" })).config,
    "/srv/g/config.json",
  );
  assert.equal(
    resolvePaths(envOf({ USERPROFILE: "C:\\Users\\ada" })).config,
    "C:\\Users\\ada\\.gwcli\\config.json",
  );
  assert.throws(() => homeDirectory(envOf({})), CliError);
  assert.throws(() => homeDirectory(envOf({ HOME: "" })), /set HOME/);
});

Deno.test("paths: joinPath drops trailing separators of the base", () => {
  assert.equal(joinPath("/a/b/", "c", "d"), "/a/b/c/d");
  assert.equal(joinPath("C:\\x\\", "y"), "C:\\x\\y");
});

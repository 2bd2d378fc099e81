import assert from "node:assert/strict";
import { envOf } from "../env.ts";
import { defaultInstallDir, onPath, releasePlatform } from "./platform.ts";
import {
  DEFAULT_RELEASE_URL,
  latestIndexUrl,
  latestSignatureUrl,
  parseChecksums,
  parseVersion,
  releaseBaseUrl,
  releaseFiles,
} from "./release.ts";

Deno.test("release: platforms, archive formats and default directories", () => {
  assert.deepEqual(releasePlatform("linux", "x86_64"), {
    os: "linux",
    arch: "x86_64",
    archive: "tar.gz",
    binary: "gateway",
  });
  assert.equal(releasePlatform("darwin", "aarch64").archive, "tar.gz");
  assert.deepEqual(releasePlatform("windows", "x86_64").binary, "gateway.exe");
  assert.equal(releasePlatform("windows", "aarch64").archive, "zip");
  assert.throws(
    () => releasePlatform("freebsd", "x86_64"),
    /no gateway release exists for freebsd/,
  );
  assert.throws(() => releasePlatform("linux", "riscv64"), /no gateway release exists for riscv64/);
  assert.equal(defaultInstallDir("linux", envOf({ HOME: "/home/a" })), "/home/a/.local/bin");
  assert.equal(defaultInstallDir("darwin", envOf({ HOME: "/Users/a" })), "/Users/a/.local/bin");
  assert.equal(
    defaultInstallDir("windows", envOf({ APPDATA: "C:\\Users\\a\\AppData\\Roaming" })),
    "C:\\Users\\a\\AppData\\Roaming\\gwcli\\bin",
  );
  assert.throws(() => defaultInstallDir("windows", envOf({})), /APPDATA is not set/);
  assert.equal(onPath("/x/bin", envOf({ PATH: "/usr/bin:/x/bin/" }), "linux"), true);
  assert.equal(onPath("C:\\g\\bin", envOf({ Path: "C:\\Windows;C:\\g\\bin" }), "windows"), true);
  assert.equal(onPath("/y", envOf({ PATH: "/usr/bin" }), "linux"), false);
});

Deno.test("release: versions, the base URL, file names and the latest index", () => {
  assert.equal(parseVersion("latest"), "latest");
  assert.equal(parseVersion("v0.12.0"), "0.12.0");
  assert.equal(parseVersion("1.0.0-rc.1+build.5"), "1.0.0-rc.1+build.5");
  for (const bad of ["1.2", "newest", "v", "1.2.3/../x"]) {
    assert.throws(() => parseVersion(bad), /invalid version/, bad);
  }
  assert.equal(releaseBaseUrl(envOf({})), DEFAULT_RELEASE_URL);
  assert.equal(
    releaseBaseUrl(envOf({ GWCLI_RELEASE_URL: "http://mirror/rel/" })),
    "http://mirror/rel",
  );
  assert.throws(
    () => releaseBaseUrl(envOf({ GWCLI_RELEASE_URL: "file:///x" })),
    /must start with http/,
  );
  assert.deepEqual(releaseFiles("https://r", "0.12.0", releasePlatform("linux", "aarch64")), {
    archiveName: "gateway-0.12.0-linux-aarch64.tar.gz",
    archiveUrl: "https://r/download/v0.12.0/gateway-0.12.0-linux-aarch64.tar.gz",
    checksumsUrl: "https://r/download/v0.12.0/SHA256SUMS",
    signatureUrl: "https://r/download/v0.12.0/SHA256SUMS.sig",
  });
  assert.equal(
    releaseFiles("https://r", "1.0.0", releasePlatform("windows", "x86_64")).archiveName,
    "gateway-1.0.0-windows-x86_64.zip",
  );
  assert.equal(latestIndexUrl("https://r"), "https://r/latest/download/latest.json");
  assert.equal(latestSignatureUrl("https://r"), "https://r/latest/download/latest.json.sig");
});

Deno.test("release: SHA256SUMS in text and binary mode", () => {
  const a = "a".repeat(64);
  const b = "B".repeat(64);
  const sums = parseChecksums(
    `${a}  gateway-1-linux-x86_64.tar.gz\n${b} *./gateway-1-windows-x86_64.zip\nnoise\n`,
  );
  assert.deepEqual([...sums], [
    ["gateway-1-linux-x86_64.tar.gz", a],
    ["gateway-1-windows-x86_64.zip", "b".repeat(64)],
  ]);
});

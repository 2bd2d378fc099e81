/**
 * gwcli gateway:install against a local release server: a `tar.gz` made by the system `tar`,
 * `SHA256SUMS`, the signed `latest.json` index, the default directory (~/.local/bin), `-d`, and
 * the failures that must install nothing (checksum mismatch, no checksum, unknown version, a
 * forged or unsigned index, an older signed release offered as the latest or named without
 * `--allow-downgrade`, another version's signed checksums).
 */
import { createHash } from "node:crypto";
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { expectExit, withGwcliHome } from "./gwcli_support.ts";
import { removeDir, requirePeer, runCommand, tempDir } from "./support/mod.ts";
import { generateReleaseKey, signRelease } from "../shared/mod.ts";

const OS = Deno.build.os;
const ARCH = Deno.build.arch;

/** A release archive made by `tar`: `gateway-<v>/gateway` (a script printing its version). */
async function makeArchive(dir: string, version: string): Promise<Uint8Array<ArrayBuffer>> {
  const root = `${dir}/gateway-${version}`;
  await Deno.mkdir(root, { recursive: true });
  await Deno.writeTextFile(`${root}/README.md`, "gateway release\n");
  await Deno.writeTextFile(`${root}/gateway`, `#!/bin/sh\necho "gateway ${version}"\n`);
  const archive = `${dir}/release-${version}.tar.gz`;
  const r = await runCommand("tar", ["-czf", archive, "-C", dir, `gateway-${version}`]);
  assertEquals(r.code, 0, r.stderr);
  return await Deno.readFile(archive);
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

Deno.test({
  name: "gwcli gateway:install: latest and a pinned version from a local release server, checksums",
  ignore: OS === "windows" || !requirePeer("gwcli install test", "tar", "tar"),
  fn: async () => {
    const work = await tempDir("gwcli-release-");
    const good = await makeArchive(work, "1.2.3");
    const tampered = await makeArchive(work, "1.2.4");
    const newer = await makeArchive(work, "1.3.0");
    const name = (v: string) => `gateway-${v}-${OS}-${ARCH}.tar.gz`;
    const key = await generateReleaseKey();
    const other = await generateReleaseKey();
    const sign = async (text: string, signer = key) =>
      await signRelease(signer.privateKey, new TextEncoder().encode(text));
    const index = JSON.stringify({ version: "1.2.3" });
    const sums123 = `${sha256(good)}  ${name("1.2.3")}\n${"0".repeat(64)}  other.zip\n`;
    const files = new Map<string, Uint8Array<ArrayBuffer> | string>([
      ["/rel/latest/download/latest.json", index],
      ["/rel/latest/download/latest.json.sig", await sign(index)],
      // Mirrors with a bad index: changed after signing, signed by another key, not signed.
      ["/forged/latest/download/latest.json", JSON.stringify({ version: "1.3.0" })],
      ["/forged/latest/download/latest.json.sig", await sign(index)],
      ["/foreign/latest/download/latest.json", index],
      ["/foreign/latest/download/latest.json.sig", await sign(index, other)],
      ["/unsigned/latest/download/latest.json", index],
      [`/rel/download/v1.2.3/${name("1.2.3")}`, good],
      [`/rel/download/v1.2.3/SHA256SUMS`, sums123],
      [`/rel/download/v1.2.4/${name("1.2.4")}`, tampered],
      [`/rel/download/v1.2.4/SHA256SUMS`, `${sha256(good)}  ${name("1.2.4")}\n`],
      [`/rel/download/v1.2.5/${name("1.2.5")}`, good],
      [`/rel/download/v1.2.5/SHA256SUMS`, `${sha256(good)}  something-else.tar.gz\n`],
      [`/rel/download/v1.2.6/${name("1.2.6")}`, good],
      [`/rel/download/v1.2.6/SHA256SUMS`, `${sha256(good)}  ${name("1.2.6")}\n`],
      [`/rel/download/v1.3.0/${name("1.3.0")}`, newer],
      [`/rel/download/v1.3.0/SHA256SUMS`, `${sha256(newer)}  ${name("1.3.0")}\n`],
      // 1.2.3's signed checksums (and archive) under 1.3.1's URLs.
      [`/rel/download/v1.3.1/${name("1.3.1")}`, good],
      [`/rel/download/v1.3.1/SHA256SUMS`, sums123],
    ]);
    // Every SHA256SUMS is signed by the publisher, except 1.2.6's, signed by another key.
    for (const [path, text] of [...files]) {
      if (!path.endsWith("/SHA256SUMS")) continue;
      const signer = path.includes("v1.2.6") ? other : key;
      files.set(
        `${path}.sig`,
        await signRelease(signer.privateKey, new TextEncoder().encode(text as string)),
      );
    }
    const requests: string[] = [];
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (req) => {
      const path = new URL(req.url).pathname;
      requests.push(path);
      const body = files.get(path);
      return body === undefined ? new Response("not found", { status: 404 }) : new Response(body);
    });
    const base = `http://127.0.0.1:${server.addr.port}/rel`;
    try {
      await withGwcliHome(async (home) => {
        const latest = expectExit(await home.run(["gateway:install"]), 0, "install latest");
        const target = `${home.home}/.local/bin/gateway`;
        assertMatch(latest.stdout, /^The latest release is 1\.2\.3\.\n/);
        assertMatch(
          latest.stdout,
          new RegExp(
            `Installed gateway 1\\.2\\.3 \\(${OS} ${ARCH}\\) to ${target} \\(.* archive, signature and checksum verified\\)\\.`,
          ),
        );
        assertMatch(latest.stdout, /\.local\/bin is not on your PATH/);
        assertEquals((await Deno.stat(target)).mode! & 0o777, 0o755);
        assertEquals((await runCommand(target, [])).stdout, "gateway 1.2.3\n");
        assertEquals(requests.slice(0, 5), [
          "/rel/latest/download/latest.json",
          "/rel/latest/download/latest.json.sig",
          "/rel/download/v1.2.3/SHA256SUMS",
          "/rel/download/v1.2.3/SHA256SUMS.sig",
          `/rel/download/v1.2.3/${name("1.2.3")}`,
        ]);

        const dir = `${home.home}/opt/bin`;
        const pinned = expectExit(
          await home.run(["gateway:install", "--version", "v1.2.3", "-d", dir, "-q"], {
            env: { PATH: `${dir}:/usr/bin:/bin` },
          }),
          0,
          "install a pinned version",
        );
        // -q leaves only the result, and the directory is on PATH: no hint.
        assertMatch(
          pinned.stdout,
          new RegExp(
            `^Installed gateway 1\\.2\\.3 \\(${OS} ${ARCH}\\) to ${dir}/gateway ` +
              "\\([\\d.]+ (B|KiB) archive, signature and checksum verified\\)\\.\\n$",
          ),
        );
        assertEquals((await runCommand(`${dir}/gateway`, [])).stdout, "gateway 1.2.3\n");

        const mismatch = expectExit(
          await home.run(["gateway:install", "--version", "1.2.4", "-d", dir]),
          1,
          "checksum mismatch",
        );
        assertMatch(
          mismatch.stderr,
          /checksum mismatch for gateway-1\.2\.4-.*: SHA256SUMS says [0-9a-f]{64}, the download is [0-9a-f]{64}; nothing was installed/,
        );
        assertEquals(
          (await runCommand(`${dir}/gateway`, [])).stdout,
          "gateway 1.2.3\n",
          "the old binary stays",
        );
        assertEquals([...Deno.readDirSync(dir)].map((e) => e.name), ["gateway"], "no leftovers");

        const unlisted = expectExit(
          await home.run(["gateway:install", "--version", "1.2.5", "-d", dir]),
          1,
        );
        assertMatch(
          unlisted.stderr,
          /lists no checksum for gateway-1\.2\.5-.*; nothing was installed/,
        );
        const missing = expectExit(
          await home.run(["gateway:install", "--version", "9.9.9", "-d", dir]),
          1,
        );
        assertMatch(
          missing.stderr,
          /cannot read the checksums at .*\/download\/v9\.9\.9\/SHA256SUMS \(404\)/,
        );
        const foreign = expectExit(
          await home.run(["gateway:install", "--version", "1.2.6", "-d", dir]),
          1,
        );
        assertMatch(
          foreign.stderr,
          /is not signed by a trusted release key; nothing was installed/,
        );
        const swapped = expectExit(
          await home.run(["gateway:install", "--version", "1.3.1", "-d", dir]),
          1,
        );
        assertMatch(
          swapped.stderr,
          /lists no checksum for gateway-1\.3\.1-.*; nothing was installed/,
        );
        const invalid = expectExit(await home.run(["gateway:install", "--version", "newest"]), 2);
        assertMatch(invalid.stderr, /invalid version "newest"/);
        const noArg = expectExit(await home.run(["gateway:install", "--version"]), 2);
        assertMatch(noArg.stderr, /option '--version <VERSION>' argument missing/);
      }, { GWCLI_RELEASE_URL: base, GWCLI_RELEASE_PUBLIC_KEY: key.publicKey });

      await withGwcliHome(async (home) => {
        const target = `${home.home}/.local/bin/gateway`;
        const version = async () => (await runCommand(target, [])).stdout;
        expectExit(await home.run(["gateway:install", "--version", "1.3.0"]), 0, "install 1.3.0");
        assertEquals(await version(), "gateway 1.3.0\n");
        // The signed index names 1.2.3, older than what is installed: a mirror may be replaying
        // an old index. Refused, and nothing is downloaded.
        const before = requests.length;
        const replayed = expectExit(await home.run(["gateway:install"]), 1, "older latest");
        assertMatch(
          replayed.stderr,
          new RegExp(
            "error: the release index .*/rel/latest/download/latest\\.json names 1\\.2\\.3, " +
              `older than gateway 1\\.3\\.0 at ${target}; nothing was installed\n` +
              ".*gwcli gateway:install --version 1\\.2\\.3 --allow-downgrade",
          ),
        );
        assertEquals(requests.slice(before), [
          "/rel/latest/download/latest.json",
          "/rel/latest/download/latest.json.sig",
        ]);
        // Named, it still needs --allow-downgrade; --allow-downgrade needs a named version.
        const named = expectExit(await home.run(["gateway:install", "--version", "1.2.3"]), 1);
        assertMatch(
          named.stderr,
          /gateway 1\.3\.0 at .* is newer than 1\.2\.3; nothing was installed\n.*--allow-downgrade/,
        );
        const unnamed = expectExit(await home.run(["gateway:install", "--allow-downgrade"]), 2);
        assertMatch(unnamed.stderr, /--allow-downgrade needs --version/);
        assertEquals(await version(), "gateway 1.3.0\n");
        const allowed = expectExit(
          await home.run(["gateway:install", "--version", "1.2.3", "--allow-downgrade"]),
          0,
          "allowed downgrade",
        );
        assertMatch(allowed.stdout, /Replacing gateway 1\.3\.0 with the older 1\.2\.3/);
        assertEquals(await version(), "gateway 1.2.3\n");
        // gwcli remembers what it installed in its data directory, by the binary's hash.
        const installs = JSON.parse(await Deno.readTextFile(`${home.dir}/installs.json`));
        assertEquals(installs.installs[await Deno.realPath(target)].version, "1.2.3");
        // A binary replaced by something else since has no known version: replaced, with a note.
        await Deno.writeTextFile(target, "#!/bin/sh\necho built from source\n");
        const unknown = expectExit(await home.run(["gateway:install"]), 0, "unknown binary");
        assertMatch(unknown.stderr, /note: .* was not installed by gwcli, or changed since/);
        assertEquals(await version(), "gateway 1.2.3\n");

        // A forged, foreign or unsigned index is refused before any release file is read.
        for (
          const [mirror, why] of [
            [
              "forged",
              /latest\.json is not signed by a trusted release key; nothing was installed/,
            ],
            ["foreign", /latest\.json is not signed by a trusted release key/],
            ["unsigned", /latest\.json is not signed \(.*latest\.json\.sig: 404\); nothing/],
          ] as const
        ) {
          const res = expectExit(
            await home.run(["gateway:install"], {
              env: { GWCLI_RELEASE_URL: `http://127.0.0.1:${server.addr.port}/${mirror}` },
            }),
            1,
            mirror,
          );
          assertMatch(res.stderr, why);
          assert(!requests.some((p) => p.startsWith(`/${mirror}/download/`)), mirror);
        }
      }, { GWCLI_RELEASE_URL: base, GWCLI_RELEASE_PUBLIC_KEY: key.publicKey });

      await withGwcliHome(async (home) => {
        const untrusted = expectExit(await home.run(["gateway:install", "--version", "1.2.3"]), 1);
        assertMatch(untrusted.stderr, /no release signing key is trusted; nothing was installed/);
      }, { GWCLI_RELEASE_URL: base });

      await withGwcliHome(async (home) => {
        const noIndex = expectExit(await home.run(["gateway:install"]), 1);
        assertMatch(
          noIndex.stderr,
          /cannot find the latest release at .*\/latest\/download\/latest\.json \(404\)/,
        );
        assert(!requests.includes("/elsewhere/download/v1.2.3/SHA256SUMS"));
      }, {
        GWCLI_RELEASE_URL: `http://127.0.0.1:${server.addr.port}/elsewhere`,
        GWCLI_RELEASE_PUBLIC_KEY: key.publicKey,
      });
    } finally {
      await server.shutdown();
      await removeDir(work);
    }
  },
});

/**
 * The release task and `gwcli gateway:install` end to end: `deno task release --from DIR` makes a
 * signed release tree from placeholder executables; a local HTTP server serves it; gwcli installs
 * from it (signed index, signature, checksum, progress, the executable bit), and refuses a
 * tampered archive, a tampered checksum file, a release signed by another key, a forged or
 * unsigned index, an older signed release offered as the latest, and an older release's signed
 * checksums served under a newer version. Without `--from`, `deno compile` must download its
 * runtime: where that fails the task says so in one line.
 */
import { assert, assertEquals, assertMatch } from "./assert.ts";
import { expectExit, withGwcliHome } from "./gwcli_support.ts";

/**
 * A release installed end to end: gwcli runs as the `gwcli` task's subprocess. The install test
 * runs its refusals in this process (`runCli`, the same code): the task's permissions are proved
 * by the installs that succeed, and each Deno start spared is ~0.5 s of CPU.
 */
const E2E = { subprocess: true };
import { removeDir, REPO_ROOT, runCommand, tempDir } from "./support/mod.ts";
import { generateReleaseKey, verifyRelease } from "../shared/mod.ts";
import { currentTarget } from "../deploy/release/release.ts";

const OS = Deno.build.os;

/** Runs the release task; its exit code and output. */
async function release(args: string[], signingKey: string) {
  return await runCommand(Deno.execPath(), [
    "run",
    "--allow-read",
    "--allow-write",
    "--allow-env",
    "--allow-run",
    "deploy/release/release.ts",
    ...args,
  ], { cwd: REPO_ROOT, env: { RELEASE_SIGNING_KEY: signingKey, NO_COLOR: "1" } });
}

Deno.test({
  name: "release task + gwcli gateway:install: signed, checked, installed; tampering refused",
  ignore: OS === "windows",
  fn: async () => {
    const work = await tempDir("release-e2e-");
    const key = await generateReleaseKey();
    const stranger = await generateReleaseKey();
    const target = currentTarget();
    const from = `${work}/bin`;
    await Deno.mkdir(from);
    // A placeholder executable large enough for several progress steps.
    const script = `#!/bin/sh\necho "gateway 2.0.0"\nexit 0\n# ${"x".repeat(300_000)}\n`;
    await Deno.writeTextFile(`${from}/gateway-${target}`, script);
    const out = `${work}/release`;
    const made = await release(
      ["--version", "2.0.0", "--from", from, "--out", out],
      key.privateKey,
    );
    assertEquals(made.code, 0, made.stderr);
    const dir = `${out}/download/v2.0.0`;
    const archive = (await Array.fromAsync(Deno.readDir(dir))).map((e) => e.name).find((n) =>
      n.endsWith(".tar.gz")
    )!;
    assertEquals(archive, `gateway-2.0.0-${target}.tar.gz`);
    const index = await Deno.readFile(`${out}/latest/download/latest.json`);
    assertEquals(JSON.parse(new TextDecoder().decode(index)), { version: "2.0.0" });
    // The index is signed by the release key, over its exact bytes.
    const indexSig = await Deno.readTextFile(`${out}/latest/download/latest.json.sig`);
    assert(await verifyRelease([key.publicKey], index, indexSig.trim()), "latest.json.sig");
    assert(!(await verifyRelease([stranger.publicKey], index, indexSig.trim())));
    // An older release by the same publisher: validly signed, and a mirror may offer it.
    const oldFrom = `${work}/old-bin`;
    await Deno.mkdir(oldFrom);
    await Deno.writeTextFile(`${oldFrom}/gateway-${target}`, `#!/bin/sh\necho "gateway 1.9.0"\n`);
    const oldOut = `${work}/old`;
    const old = await release(
      ["--version", "1.9.0", "--from", oldFrom, "--out", oldOut],
      key.privateKey,
    );
    assertEquals(old.code, 0, old.stderr);
    // Also a second, differently keyed release to show that keys are checked.
    const otherOut = `${work}/other`;
    const other = await release(
      ["--version", "2.0.1", "--from", from, "--out", otherOut],
      stranger.privateKey,
    );
    assertEquals(other.code, 0, other.stderr);

    // Mirrors, by the first path segment: `rel` the release, `other` the stranger's, `old` the
    // older release; `forged` and `unsigned` the release with its index changed or unsigned;
    // `swap` the release with 1.9.0's signed checksums and archive under v2.0.0's URLs.
    const roots: Record<string, string> = {
      rel: out,
      other: otherOut,
      old: oldOut,
      forged: out,
      unsigned: out,
      swap: out,
    };
    const oldArchive = `gateway-1.9.0-${target}.tar.gz`;
    const requests: string[] = [];
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (req) => {
        const path = new URL(req.url).pathname;
        requests.push(path);
        const [, mirror, ...rest] = path.split("/");
        let file = `${roots[mirror] ?? out}/${rest.join("/")}`;
        if (mirror === "forged" && path.endsWith("/latest/download/latest.json")) {
          return new Response(JSON.stringify({ version: "1.9.0" }) + "\n");
        }
        if (mirror === "unsigned" && path.endsWith("/latest.json.sig")) {
          return new Response("not found", { status: 404 });
        }
        if (mirror === "swap" && path.includes("/download/v2.0.0/")) {
          const name = rest.at(-1)!;
          file = `${oldOut}/download/v1.9.0/${name === archive ? oldArchive : name}`;
        }
        try {
          return new Response(await Deno.readFile(file));
        } catch {
          return new Response("not found", { status: 404 });
        }
      },
    );
    const base = `http://127.0.0.1:${server.addr.port}`;
    try {
      await withGwcliHome(
        async (home) => {
          const installDir = `${home.home}/bin`;
          const ok = expectExit(
            await home.run(["gateway:install", "-d", installDir], E2E),
            0,
            "install",
          );
          assertMatch(ok.stdout, /The latest release is 2\.0\.0\./);
          assertMatch(ok.stdout, /signature and checksum verified/);
          // The progress of the download (stderr is not a terminal: a line per quarter).
          assertMatch(ok.stderr, /downloading gateway-2\.0\.0-.*\.tar\.gz 100% \(/);
          assertEquals((await Deno.stat(`${installDir}/gateway`)).mode! & 0o777, 0o755);
          assertEquals((await runCommand(`${installDir}/gateway`, [])).stdout, "gateway 2.0.0\n");

          // A validly signed older release offered as the latest: refused, 2.0.0 stays.
          const mirror = (name: string) => ({ env: { GWCLI_RELEASE_URL: `${base}/${name}` } });
          const older = expectExit(
            await home.run(["gateway:install", "-d", installDir], mirror("old")),
            1,
            "an older release as the latest",
          );
          assertMatch(
            older.stderr,
            /the release index .*\/old\/latest\/download\/latest\.json names 1\.9\.0, older than gateway 2\.0\.0 at .*; nothing was installed/,
          );
          assertMatch(older.stderr, /--version 1\.9\.0 --allow-downgrade/);
          assert(!requests.some((p) => p.startsWith("/old/download/")), "nothing was downloaded");
          // A forged index (changed after signing) and an unsigned one: refused before any release
          // file is read.
          const forged = expectExit(
            await home.run(["gateway:install", "-d", installDir], mirror("forged")),
            1,
          );
          assertMatch(forged.stderr, /latest\.json is not signed by a trusted release key/);
          const unsigned = expectExit(
            await home.run(["gateway:install", "-d", installDir], mirror("unsigned")),
            1,
          );
          assertMatch(unsigned.stderr, /latest\.json is not signed \(.*latest\.json\.sig: 404\)/);
          assert(!requests.some((p) => /^\/(forged|unsigned)\/download\//.test(p)));
          // 1.9.0's signed checksums (and archive) under v2.0.0's URLs: they name 1.9.0's archive.
          const swapped = expectExit(
            await home.run(
              ["gateway:install", "--version", "2.0.0", "-d", `${home.home}/swap`],
              mirror("swap"),
            ),
            1,
          );
          assertMatch(
            swapped.stderr,
            /lists no checksum for gateway-2\.0\.0-.*; nothing was installed/,
          );
          // Named and allowed, the older release goes in; the latest brings 2.0.0 back.
          const back = expectExit(
            await home.run(
              ["gateway:install", "--version", "1.9.0", "--allow-downgrade", "-d", installDir],
              { ...mirror("old"), ...E2E },
            ),
            0,
            "an allowed downgrade",
          );
          assertMatch(back.stdout, /Replacing gateway 2\.0\.0 with the older 1\.9\.0/);
          assertEquals((await runCommand(`${installDir}/gateway`, [])).stdout, "gateway 1.9.0\n");
          expectExit(
            await home.run(["gateway:install", "-d", installDir], E2E),
            0,
            "upgrade again",
          );
          assertEquals((await runCommand(`${installDir}/gateway`, [])).stdout, "gateway 2.0.0\n");

          // A tampered archive: the checksum no longer matches.
          const path = `${dir}/${archive}`;
          const original = await Deno.readFile(path);
          await Deno.writeFile(path, new Uint8Array([...original, 0]));
          const tampered = expectExit(
            await home.run(["gateway:install", "--version", "2.0.0", "-d", `${home.home}/b2`]),
            1,
          );
          assertMatch(tampered.stderr, /checksum mismatch/);
          // ... and SHA256SUMS rewritten to match it: the signature no longer verifies.
          const digest = await crypto.subtle.digest("SHA-256", await Deno.readFile(path));
          const hex = Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0"))
            .join("");
          await Deno.writeTextFile(`${dir}/SHA256SUMS`, `${hex}  ${archive}\n`);
          const resigned = expectExit(
            await home.run(["gateway:install", "--version", "2.0.0", "-d", `${home.home}/b3`]),
            1,
          );
          assertMatch(
            resigned.stderr,
            /not signed by a trusted release key; nothing was installed/,
          );
          assert(!(await Deno.stat(`${home.home}/b3/gateway`).then(() => true, () => false)));
        },
        { GWCLI_RELEASE_URL: `${base}/rel`, GWCLI_RELEASE_PUBLIC_KEY: key.publicKey },
      );

      await withGwcliHome(
        async (home) => {
          const foreign = expectExit(
            await home.run(["gateway:install", "--version", "2.0.1", "-d", `${home.home}/b`]),
            1,
          );
          assertMatch(foreign.stderr, /not signed by a trusted release key/);
        },
        { GWCLI_RELEASE_URL: `${base}/other`, GWCLI_RELEASE_PUBLIC_KEY: key.publicKey },
      );
    } finally {
      await server.shutdown();
      await removeDir(work);
    }
  },
});

Deno.test("release task: deno compile's runtime download either works or is named in one line", async () => {
  const work = await tempDir("release-compile-");
  try {
    const key = await generateReleaseKey();
    // A foreign target: its runtime is never in the cache of this machine's own deno.
    const target = currentTarget() === "windows-x86_64" ? "linux-x86_64" : "windows-x86_64";
    const result = await release(
      ["--version", "2.0.0", "--target", target, "--out", `${work}/out`],
      key.privateKey,
    );
    if (result.code === 0) {
      assertMatch(result.stdout, /SHA256SUMS\.sig/);
    } else {
      const lines = result.stderr.trim().split("\n");
      assertEquals(lines.length, 1, result.stderr);
      assertMatch(
        lines[0],
        /^release: deno compile could not download the .* runtime \(denort\) from dl\.deno\.land: .*--from DIR/,
      );
    }
    const noKey = await runCommand(Deno.execPath(), [
      "run",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-run",
      "deploy/release/release.ts",
      "--version",
      "2.0.0",
    ], { cwd: REPO_ROOT, env: { RELEASE_SIGNING_KEY: "" } });
    assertEquals(noKey.code, 1);
    assertMatch(noKey.stderr, /RELEASE_SIGNING_KEY is not set/);
  } finally {
    await removeDir(work);
  }
});

Deno.test({
  name:
    "release task + gwcli self-update: a signed gwcli release replaces the file; the downgrade rule holds",
  ignore: OS === "windows",
  fn: async () => {
    const work = await tempDir("release-self-");
    const key = await generateReleaseKey();
    const target = currentTarget();
    const make = async (version: string) => {
      const from = `${work}/bin-${version}`;
      await Deno.mkdir(from);
      await Deno.writeTextFile(
        `${from}/gateway-${target}`,
        `#!/bin/sh\necho "gateway ${version}"\n`,
      );
      await Deno.writeTextFile(`${from}/gwcli-${target}`, `#!/bin/sh\necho "gwcli ${version}"\n`);
      const out = `${work}/rel-${version}`;
      const made = await release(
        ["--version", version, "--from", from, "--out", out],
        key.privateKey,
      );
      assertEquals(made.code, 0, made.stderr);
      return out;
    };
    const current = await make("2.0.0");
    const older = await make("1.9.0");
    const sums = await Deno.readTextFile(`${current}/download/v2.0.0/SHA256SUMS`);
    assertMatch(sums, new RegExp(`  gwcli-2\\.0\\.0-${target}\\.tar\\.gz\\n`), "gwcli is released");
    assertMatch(sums, new RegExp(`  gateway-2\\.0\\.0-${target}\\.tar\\.gz\\n`));
    const requests: string[] = [];
    const roots: Record<string, string> = { rel: current, old: older };
    const server = Deno.serve(
      { hostname: "127.0.0.1", port: 0, onListen: () => {} },
      async (req) => {
        const path = new URL(req.url).pathname;
        requests.push(path);
        const [, mirror, ...rest] = path.split("/");
        try {
          return new Response(await Deno.readFile(`${roots[mirror]}/${rest.join("/")}`));
        } catch {
          return new Response("not found", { status: 404 });
        }
      },
    );
    const base = `http://127.0.0.1:${server.addr.port}`;
    const mirror = (name: string) => ({ env: { GWCLI_RELEASE_URL: `${base}/${name}` } });
    try {
      await withGwcliHome(
        async (home) => {
          // gwcli runs from source here: there is no executable of its own to replace.
          const fromSource = expectExit(await home.run(["self-update", "-y"]), 2, "from source");
          assertMatch(fromSource.stderr, /runs from source .* pass --path FILE/s);

          const file = `${home.home}/bin/gwcli`;
          await Deno.mkdir(`${home.home}/bin`);
          await Deno.writeTextFile(file, "#!/bin/sh\necho unknown\n", { mode: 0o755 });
          const updated = expectExit(
            await home.run(["self-update", "--path", file, "-y"]),
            0,
            "self-update",
          );
          assertMatch(updated.stdout, /The latest release is 2\.0\.0\./);
          assertMatch(
            updated.stdout,
            /Updated gwcli \(unknown version\) to 2\.0\.0 at .*\/bin\/gwcli \(.* archive, signature and checksum verified\)\./,
          );
          assertMatch(updated.stderr, /its version is unknown/);
          assertEquals((await runCommand(file, [])).stdout, "gwcli 2.0.0\n");
          assertEquals((await Deno.stat(file)).mode! & 0o777, 0o755);
          assert(
            requests.includes("/rel/download/v2.0.0/SHA256SUMS.sig"),
            "the signature was read",
          );

          // The same version again: nothing is downloaded.
          const downloads = requests.filter((p) => p.endsWith(".tar.gz")).length;
          const again = expectExit(await home.run(["self-update", "--path", file, "-y"]), 0);
          assertMatch(again.stdout, /is already 2\.0\.0; nothing to do/);
          assertEquals(requests.filter((p) => p.endsWith(".tar.gz")).length, downloads);

          // An older signed release offered as the latest, or named without --allow-downgrade: refused.
          const offered = expectExit(
            await home.run(["self-update", "--path", file, "-y"], mirror("old")),
            1,
            "an older release as the latest",
          );
          assertMatch(
            offered.stderr,
            /names 1\.9\.0, older than gwcli 2\.0\.0 at .*; nothing was installed/,
          );
          assertMatch(offered.stderr, /gwcli self-update --version 1\.9\.0 --allow-downgrade/);
          const named = expectExit(
            await home.run(
              ["self-update", "--path", file, "--version", "1.9.0", "-y"],
              mirror("old"),
            ),
            1,
          );
          assertMatch(
            named.stderr,
            /gwcli 2\.0\.0 at .* is newer than 1\.9\.0; nothing was installed/,
          );
          assertEquals((await runCommand(file, [])).stdout, "gwcli 2.0.0\n", "unchanged");
          const back = expectExit(
            await home.run(
              ["self-update", "--path", file, "--version", "1.9.0", "--allow-downgrade", "--yes"],
              mirror("old"),
            ),
            0,
            "an allowed downgrade",
          );
          assertMatch(back.stdout, /Replacing gwcli 2\.0\.0 with the older 1\.9\.0/);
          assertEquals((await runCommand(file, [])).stdout, "gwcli 1.9.0\n");

          // Without a pinned key nothing is installed, and the hint says how to pin one.
          const unpinned = expectExit(
            await home.run(["self-update", "--path", file, "-y"], {
              env: { GWCLI_RELEASE_PUBLIC_KEY: "" },
            }),
            1,
          );
          assertMatch(unpinned.stderr, /no release signing key is trusted/);
          assertMatch(
            unpinned.stderr,
            /export GWCLI_RELEASE_PUBLIC_KEY=.*Pinning the release key/s,
          );

          // A tampered gwcli archive: the checksum does not match; the file stays.
          const archive = `${current}/download/v2.0.0/gwcli-2.0.0-${target}.tar.gz`;
          await Deno.writeFile(archive, new Uint8Array([...await Deno.readFile(archive), 0]));
          const tampered = expectExit(await home.run(["self-update", "--path", file, "-y"]), 1);
          assertMatch(tampered.stderr, /checksum mismatch for gwcli-2\.0\.0-/);
          assertEquals((await runCommand(file, [])).stdout, "gwcli 1.9.0\n");
          assertEquals([...Deno.readDirSync(`${home.home}/bin`)].map((e) => e.name), ["gwcli"]);
        },
        { GWCLI_RELEASE_URL: `${base}/rel`, GWCLI_RELEASE_PUBLIC_KEY: key.publicKey },
        E2E,
      );
    } finally {
      await server.shutdown();
      await removeDir(work);
    }
  },
});

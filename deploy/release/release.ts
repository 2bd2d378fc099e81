/**
 * `deno task release --version V`: the gateway (and gwcli) executables of a release, packed and
 * signed in the layout `gwcli gateway:install` and `gwcli self-update` download
 * (cli/install/release.ts), under `dist/release/`:
 *
 *   dist/release/latest/download/latest.json      {"version": "<V>"}
 *   dist/release/latest/download/latest.json.sig  (Ed25519, RELEASE_SIGNING_KEY)
 *   dist/release/download/v<V>/gateway-<V>-<os>-<arch>.tar.gz | .zip
 *   dist/release/download/v<V>/gwcli-<V>-<os>-<arch>.tar.gz | .zip
 *   dist/release/download/v<V>/SHA256SUMS
 *   dist/release/download/v<V>/SHA256SUMS.sig     (Ed25519, RELEASE_SIGNING_KEY)
 *
 * The version is signed twice: in `latest.json`, and in `SHA256SUMS` through the archive names
 * (`gateway-<V>-…`), which gwcli looks up by the version it asked for, so one release's signed
 * checksums cannot pass for another's.
 *
 * The executables come from `deno compile` for each `--target` (default: this machine), or from
 * `--from DIR` (prebuilt `gateway-<os>-<arch>[.exe]` files, and `gwcli-<os>-<arch>[.exe]` when
 * present: gwcli is then part of the release). `deno compile` downloads the runtime
 * it embeds (`denort`) from dl.deno.land: where that cannot be reached the task says so in one
 * line. Upload the `download/v<V>` files to the release and `latest.json` with `latest.json.sig`
 * to it as well (GitHub's `latest/download/` then serves the newest release's).
 */
import { parseArgs } from "node:util";
import { gzipSync, zipSync } from "fflate";
import { packTar } from "modern-tar";
import { programBinary, releasePlatform, type ReleaseProgram } from "../../cli/install/mod.ts";
import { COMPILE_TARGETS, CompileError, compileProgram, currentTarget } from "./compile.ts";
import {
  generateReleaseKey,
  INDEX_FILE,
  INDEX_SIGNATURE_FILE,
  SIGNATURE_FILE,
  signRelease,
} from "../../shared/mod.ts";

const USAGE = `deno task release --version V [--target OS-ARCH ...] [--from DIR] [--out DIR]
  --version V        the release version (1.2.3)
  --target OS-ARCH   ${Object.keys(COMPILE_TARGETS).join(", ")} (repeatable; default: this machine)
  --from DIR         take gateway-<os>-<arch>[.exe] (and gwcli-<os>-<arch>[.exe] when there)
                     from DIR instead of running deno compile
  --out DIR          where the release tree goes (default dist/release)
  --keygen           print a new signing key pair and exit
  RELEASE_SIGNING_KEY: the publisher's Ed25519 private key, base64 PKCS #8 (required)`;

/** A release failure with a message for people. */
export class ReleaseError extends Error {}

/** Options of {@link makeRelease}. */
export interface ReleaseOptions {
  version: string;
  targets: string[];
  from?: string;
  out: string;
  signingKey: string;
}

export { currentTarget };

async function sha256Hex(bytes: Uint8Array): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", bytes as BufferSource);
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The archive of one program and platform: `<program>-<V>/<program>[.exe]` and a README. */
async function pack(
  program: ReleaseProgram,
  version: string,
  target: string,
  binary: Uint8Array,
): Promise<{ name: string; bytes: Uint8Array }> {
  const [os, arch] = target.split("-");
  const platform = releasePlatform(os, arch);
  const file = programBinary(program, platform.os);
  const root = `${program}-${version}`;
  const readme = new TextEncoder().encode(
    program === "gateway"
      ? `Healthcare gateway ${version} (${os} ${arch}).\nInstall with: gwcli gateway:install --version ${version}\n`
      : `gwcli ${version} (${os} ${arch}).\nUpdate an installed gwcli with: gwcli self-update --version ${version}\n`,
  );
  const name = `${program}-${version}-${platform.os}-${platform.arch}.${platform.archive}`;
  if (platform.archive === "zip") {
    return {
      name,
      bytes: zipSync({ [`${root}/${file}`]: binary, [`${root}/README.txt`]: readme }),
    };
  }
  const tar = await packTar([
    { header: { name: `${root}/`, type: "directory", size: 0, mode: 0o755 } },
    {
      header: { name: `${root}/${file}`, size: binary.byteLength, mode: 0o755 },
      body: binary,
    },
    { header: { name: `${root}/README.txt`, size: readme.byteLength, mode: 0o644 }, body: readme },
  ]);
  return { name, bytes: gzipSync(tar) };
}

/**
 * The executable of `program` for `target`: from `--from` (the gateway's is required, gwcli's
 * optional: null when absent), else `deno compile`d.
 */
async function executable(
  options: ReleaseOptions,
  program: ReleaseProgram,
  target: string,
): Promise<Uint8Array | null> {
  const exe = target.startsWith("windows") ? ".exe" : "";
  if (options.from) {
    const path = `${options.from}/${program}-${target}${exe}`;
    try {
      return await Deno.readFile(path);
    } catch {
      if (program === "gwcli") return null;
      throw new ReleaseError(`--from: ${path} is missing`);
    }
  }
  const output = `${options.out}/.build/${program}-${target}${exe}`;
  try {
    await compileProgram(program, output, target);
  } catch (err) {
    if (err instanceof CompileError) {
      throw new ReleaseError(`${err.message}, or pass --from DIR with prebuilt executables`);
    }
    throw err;
  }
  return await Deno.readFile(output);
}

/** Builds (or takes), packs, sums and signs the release; returns the files written. */
export async function makeRelease(options: ReleaseOptions): Promise<string[]> {
  if (!/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(options.version)) {
    throw new ReleaseError(`--version must be a release such as 1.2.3, got ${options.version}`);
  }
  for (const t of options.targets) {
    if (!COMPILE_TARGETS[t]) throw new ReleaseError(`unknown --target ${t}`);
  }
  const dir = `${options.out}/download/v${options.version}`;
  await Deno.mkdir(dir, { recursive: true });
  await Deno.mkdir(`${options.out}/latest/download`, { recursive: true });
  const sums: string[] = [];
  const written: string[] = [];
  for (const target of options.targets) {
    for (const program of ["gateway", "gwcli"] as const) {
      const binary = await executable(options, program, target);
      if (!binary) continue;
      const archive = await pack(program, options.version, target, binary);
      await Deno.writeFile(`${dir}/${archive.name}`, archive.bytes);
      sums.push(`${await sha256Hex(archive.bytes)}  ${archive.name}`);
      written.push(`${dir}/${archive.name}`);
    }
  }
  const checksums = new TextEncoder().encode(sums.join("\n") + "\n");
  await Deno.writeFile(`${dir}/SHA256SUMS`, checksums);
  await Deno.writeTextFile(
    `${dir}/${SIGNATURE_FILE}`,
    (await signRelease(options.signingKey, checksums)) + "\n",
  );
  // The index is signed over its exact bytes, like SHA256SUMS: no JSON canonicalization involved.
  const latest = `${options.out}/latest/download/${INDEX_FILE}`;
  const index = new TextEncoder().encode(JSON.stringify({ version: options.version }) + "\n");
  await Deno.writeFile(latest, index);
  const latestSig = `${options.out}/latest/download/${INDEX_SIGNATURE_FILE}`;
  await Deno.writeTextFile(latestSig, (await signRelease(options.signingKey, index)) + "\n");
  await Deno.remove(`${options.out}/.build`, { recursive: true }).catch(() => {});
  return [...written, `${dir}/SHA256SUMS`, `${dir}/${SIGNATURE_FILE}`, latest, latestSig];
}

if (import.meta.main) {
  try {
    const { values } = parseArgs({
      args: Deno.args,
      options: {
        version: { type: "string" },
        target: { type: "string", multiple: true },
        from: { type: "string" },
        out: { type: "string", default: "dist/release" },
        help: { type: "boolean", short: "h" },
        keygen: { type: "boolean" },
      },
    });
    if (values.keygen) {
      const pair = await generateReleaseKey();
      console.log(`RELEASE_SIGNING_KEY=${pair.privateKey}   (secret: the release machine only)`);
      console.log(
        `GWCLI_RELEASE_PUBLIC_KEY=${pair.publicKey}   (public: into RELEASE_PUBLIC_KEYS)`,
      );
      Deno.exit(0);
    }
    if (values.help || !values.version) {
      console.log(USAGE);
      Deno.exit(values.help ? 0 : 2);
    }
    const signingKey = Deno.env.get("RELEASE_SIGNING_KEY");
    if (!signingKey) {
      throw new ReleaseError("RELEASE_SIGNING_KEY is not set (the Ed25519 key, base64 PKCS #8)");
    }
    const files = await makeRelease({
      version: values.version,
      targets: values.target?.length ? values.target : [currentTarget()],
      from: values.from,
      out: values.out!,
      signingKey,
    });
    for (const f of files) console.log(f);
  } catch (err) {
    console.error(`release: ${(err as Error).message}`);
    Deno.exit(1);
  }
}

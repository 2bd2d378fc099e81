/** Helpers of the JMIX tests: generated DICOM, hostile zips, key pairs as PEM. */
import { zipSync } from "fflate";
import { generateInstances } from "../fixtures/dicom/generate.ts";
import { fromDicomJson, TS, writeDataset, writeP10 } from "../gateway/dicom/mod.ts";

/** Generated instances (1 study, 2 series x 2 instances) plus one with BodyPartExamined CHEST. */
export async function studyFiles(dir: string, uidRoot?: string) {
  const made = await generateInstances(dir, {
    seriesPerStudy: 2,
    instancesPerSeries: 2,
    patientPrefix: "JMIX",
    uidRoot,
  });
  const files = await Promise.all(made.map((m) => Deno.readFile(m.path)));
  return { made, files };
}

/** One CT instance with BodyPartExamined = CHEST in its own series of `studyUid`. */
export function chestInstance(studyUid: string): Uint8Array {
  const sop = `${studyUid}.99.1`;
  const dict = fromDicomJson({
    "00080016": { vr: "UI", Value: ["1.2.840.10008.5.1.4.1.1.2"] },
    "00080018": { vr: "UI", Value: [sop] },
    "00080060": { vr: "CS", Value: ["CT"] },
    "00100010": { vr: "PN", Value: [{ Alphabetic: "JMIX^STUDY1" }] },
    "00100020": { vr: "LO", Value: ["JMIX1"] },
    "00180015": { vr: "CS", Value: ["CHEST"] },
    "0020000D": { vr: "UI", Value: [studyUid] },
    "0020000E": { vr: "UI", Value: [`${studyUid}.99`] },
  });
  return writeP10(
    {
      transferSyntax: TS.explicitLE,
      sopClassUid: "1.2.840.10008.5.1.4.1.1.2",
      sopInstanceUid: sop,
    },
    writeDataset(dict, TS.explicitLE),
  );
}

/** A zip whose entry names are taken as given (fflate writes any name). */
export function rawZip(entries: Record<string, Uint8Array>): Uint8Array {
  return zipSync(entries, { level: 6 });
}

/** Patch the declared uncompressed size of every entry (local and central headers) to `size`. */
export function lieAboutSizes(zip: Uint8Array, size: number): Uint8Array {
  const out = zip.slice();
  const view = new DataView(out.buffer);
  for (let i = 0; i + 4 <= out.length; i++) {
    const sig = view.getUint32(i, true);
    if (sig === 0x04034b50) view.setUint32(i + 22, size, true);
    else if (sig === 0x02014b50) view.setUint32(i + 24, size, true);
  }
  return out;
}

function pem(label: string, der: ArrayBuffer): string {
  const b64 = btoa(String.fromCharCode(...new Uint8Array(der)));
  return `-----BEGIN ${label}-----\n${b64.match(/.{1,64}/g)!.join("\n")}\n-----END ${label}-----\n`;
}

/** A key pair of `alg` (Ed25519 or X25519) as PKCS#8 / SPKI PEM text. */
export async function pemPair(alg: "Ed25519" | "X25519") {
  const usages: KeyUsage[] = alg === "Ed25519" ? ["sign", "verify"] : ["deriveBits"];
  const pair = await crypto.subtle.generateKey({ name: alg }, true, usages) as CryptoKeyPair;
  return {
    privatePem: pem("PRIVATE KEY", await crypto.subtle.exportKey("pkcs8", pair.privateKey)),
    publicPem: pem("PUBLIC KEY", await crypto.subtle.exportKey("spki", pair.publicKey)),
  };
}

/** Options of the local storage root the JMIX tests use. */
export const LOCAL_STORE =
  `root = "{DIR}/store"\nread_pattern = "{path}"\nwrite_pattern = "{path}"`;

/**
 * A jmix endpoint over a storage backend `store` (`extra`: more endpoint options, `more`: more
 * backends, `store`: the storage options).
 */
export function jmixConfig(
  extra = "",
  backends = `["store"]`,
  more = "",
  store = LOCAL_STORE,
): string {
  return `
[endpoints.jmix]
service = "jmix"
[endpoints.jmix.options]
path_prefix = "/jmix"
max_package_bytes = 1048576
max_entries = 50
max_uncompressed_bytes = 4194304
${extra}
[backends.store]
service = "storage"
[backends.store.options]
${store}
${more}
[pipelines.jmix]
endpoints = ["jmix"]
backends = ${backends}
`;
}

/**
 * JMIX packages without a gateway: built from generated DICOM, validated, hashed as documented,
 * signed and encrypted round trips, and hostile zips refused.
 */
import { dicomPayload } from "../gateway/endpoints/jmix/dicom_metadata.ts";
import {
  buildPackage,
  importDecryptionKey,
  importRecipientKey,
  importSigningKey,
  importVerifyKey,
  JmixInvalid,
  readZip,
  sha256Hex,
  validatePackage,
  writeZip,
  ZipError,
} from "../shared/jmix/mod.ts";
import { removeDir, tempDir } from "./support/mod.ts";
import { assert, assertEquals, assertMatch, assertRejects } from "./assert.ts";
import { chestInstance, lieAboutSizes, pemPair, rawZip, studyFiles } from "./jmix_support.ts";

const LIMITS = { maxEntries: 100, maxUncompressedBytes: 4 * 1024 * 1024 };
const ENC = new TextEncoder();
const SENDER = { name: "test-gateway" };

async function generated() {
  const dir = await tempDir("jmix-pkg-");
  try {
    const { made, files } = await studyFiles(dir);
    return { made, files: [...files, chestInstance(made[0].studyUid)] };
  } finally {
    await removeDir(dir);
  }
}

Deno.test("jmix package: metadata from DICOM tags, layout, files.json and payload_hash", async () => {
  const { made, files } = await generated();
  const { metadata, dicom } = dicomPayload(files);
  const s = made[0];
  assertEquals(metadata.patient, {
    name: "JMIX^STUDY1",
    id: "JMIX1",
    birth_date: "19700101",
    sex: "O",
  });
  assertEquals(metadata.studies.length, 1);
  const study = metadata.studies[0];
  assertEquals(study.study_instance_uid, s.studyUid);
  assertEquals(study.description, "Generated test study");
  assertEquals(
    study.series.map((x) => [x.series_instance_uid, x.modality, x.body_part, x.instance_count]),
    [
      [`${s.studyUid}.1`, "CT", null, 2],
      [`${s.studyUid}.2`, "CT", null, 2],
      [`${s.studyUid}.99`, "CT", "CHEST", 1],
    ],
  );
  const pkg = await buildPackage({ metadata, dicom, sender: SENDER, now: new Date(0) });
  const entries = readZip(pkg.zip, LIMITS);
  assertEquals(
    [...entries.keys()].sort(),
    [
      "audit.json",
      "manifest.json",
      ...[...dicom.keys()].map((n) => `payload/dicom/${n}`).sort(),
      "payload/files.json",
      "payload/metadata.json",
    ].sort(),
  );
  assert(entries.has(`payload/dicom/${s.sopInstanceUid}.dcm`));
  const manifest = JSON.parse(new TextDecoder().decode(entries.get("manifest.json")));
  assertEquals(manifest.version, "1.0");
  assertEquals(manifest.id, pkg.id);
  assertEquals(manifest.timestamp, "1970-01-01T00:00:00.000Z");
  const audit = JSON.parse(new TextDecoder().decode(entries.get("audit.json")));
  assertEquals(audit.audit[0].event, "created");
  const list = JSON.parse(new TextDecoder().decode(entries.get("payload/files.json")));
  assertEquals(list.length, 5);
  assertEquals(list[0].sha256, await sha256Hex(entries.get(`payload/${list[0].path}`)!));

  // The documented construction: sha256sum lines of the sorted payload files, hashed.
  const payload = [...entries.keys()].filter((k) => k.startsWith("payload/")).map((k) => k.slice(8))
    .sort();
  let lines = "";
  for (const p of payload) lines += `${await sha256Hex(entries.get(`payload/${p}`)!)}  ${p}\n`;
  assertEquals(manifest.security.payload_hash, `sha256:${await sha256Hex(ENC.encode(lines))}`);

  const valid = await validatePackage(pkg.zip, { limits: LIMITS });
  assertEquals(valid.metadata, metadata);
  assertEquals(valid.manifest.id, pkg.id);
});

Deno.test("jmix package: tampering and schema violations are reported", async () => {
  const { files } = await generated();
  const { metadata, dicom } = dicomPayload(files);
  const pkg = await buildPackage({ metadata, dicom, sender: SENDER });
  const entries = readZip(pkg.zip, LIMITS);
  const name = [...entries.keys()].find((k) => k.startsWith("payload/dicom/"))!;
  const tampered = new Map(entries);
  const changed = entries.get(name)!.slice();
  changed[changed.length - 1] ^= 0xff;
  tampered.set(name, changed);
  const err = await assertRejects(() => validatePackage(writeZip(tampered), { limits: LIMITS }));
  assert(err instanceof JmixInvalid);
  assertEquals(err.problems.length, 2);
  assertEquals(err.problems[0], `${name} does not match its sha256`);
  assertMatch(err.problems[1], /^payload_hash is sha256:[0-9a-f]{64}, the payload hashes to /);

  const bad = new Map(entries);
  const manifest = JSON.parse(new TextDecoder().decode(entries.get("manifest.json")));
  bad.set("manifest.json", ENC.encode(JSON.stringify({ ...manifest, version: "2.0", id: "x" })));
  bad.set("extra.txt", ENC.encode("hi"));
  const err2 = await assertRejects(() => validatePackage(writeZip(bad), { limits: LIMITS }));
  assert(err2 instanceof JmixInvalid);
  assertEquals(err2.problems.sort(), [
    'manifest.json/id: must match format "uuid"',
    "manifest.json/version: must be equal to constant",
    "unexpected entry extra.txt",
  ]);
  const missing = new Map(entries);
  missing.delete("payload/files.json");
  const err3 = await assertRejects(() => validatePackage(writeZip(missing), { limits: LIMITS }));
  assertMatch(err3.message, /payload\/files\.json is missing/);
});

Deno.test("jmix package: hostile zips (traversal, absolute, backslash, bomb, entries, not zip)", async () => {
  const x = ENC.encode("x");
  for (
    const [name, re] of [
      ["../evil.txt", /`\.` or `\.\.` segment/],
      ["payload/../../evil", /`\.` or `\.\.` segment/],
      ["/etc/passwd", /is absolute/],
      ["payload\\dicom\\a.dcm", /backslash/],
      ["C:/win.ini", /is absolute/],
    ] as const
  ) {
    const err = await assertRejects(() =>
      validatePackage(rawZip({ [name]: x }), { limits: LIMITS })
    );
    assert(err instanceof ZipError && err.kind === "invalid", err.message);
    assertMatch(err.message, re);
  }
  // A bomb that declares its real size: refused before inflating anything.
  const zeros = new Uint8Array(8 * 1024 * 1024);
  const bomb = rawZip({ "payload/files/zeros.bin": zeros });
  assert(bomb.length < 64 * 1024, `bomb is ${bomb.length} bytes`);
  const big = await assertRejects(() => validatePackage(bomb, { limits: LIMITS }));
  assert(big instanceof ZipError && big.kind === "too_large", big.message);
  // A bomb that lies about its size: stopped as soon as it inflates past the declared size.
  const liar = await assertRejects(() =>
    validatePackage(lieAboutSizes(bomb, 1000), { limits: LIMITS })
  );
  assertMatch(liar.message, /inflates beyond its declared size/);
  const many: Record<string, Uint8Array> = {};
  for (let i = 0; i < 101; i++) many[`payload/files/f${i}`] = x;
  const tooMany = await assertRejects(() => validatePackage(rawZip(many), { limits: LIMITS }));
  assertMatch(tooMany.message, /has 101 entries; at most 100 allowed/);
  const notZip = await assertRejects(() => validatePackage(ENC.encode("{}"), { limits: LIMITS }));
  assert(notZip instanceof ZipError && notZip.kind === "not_zip");
});

Deno.test("jmix package: Ed25519 signature and X25519/HKDF/AES-GCM encryption round trips", async () => {
  const { files } = await generated();
  const { metadata, dicom } = dicomPayload(files);
  const sig = await pemPair("Ed25519");
  const other = await pemPair("Ed25519");
  const enc = await pemPair("X25519");
  const pkg = await buildPackage({
    metadata,
    dicom,
    sender: SENDER,
    signing: { key: await importSigningKey(sig.privatePem), keyId: "k1" },
    encryptFor: { key: await importRecipientKey(enc.publicPem) },
  });
  const entries = readZip(pkg.zip, LIMITS);
  assertEquals([...entries.keys()].sort(), [
    "audit.json",
    "manifest.json",
    "manifest.jws",
    "payload.enc",
  ]);
  const jws = new TextDecoder().decode(entries.get("manifest.jws"));
  const header = JSON.parse(atob(jws.split(".")[0].replace(/-/g, "+").replace(/_/g, "/")));
  assertEquals(header, { alg: "EdDSA", typ: "jmix-manifest+jws", kid: "k1" });
  assertEquals(pkg.manifest.security.encryption?.alg, "ECDH-X25519+HKDF-SHA256+A256GCM");

  const verifyKeys = [await importVerifyKey(sig.publicPem)];
  const decryptionKey = await importDecryptionKey(enc.privatePem);
  const valid = await validatePackage(pkg.zip, { limits: LIMITS, verifyKeys, decryptionKey });
  assertEquals(valid.metadata, metadata);
  // Without the private key the package is still structurally valid, its metadata unknown.
  const opaque = await validatePackage(pkg.zip, { limits: LIMITS, verifyKeys });
  assertEquals(opaque.metadata, undefined);

  const wrongSigner = await assertRejects(() =>
    validatePackage(pkg.zip, { limits: LIMITS, verifyKeys: [] as CryptoKey[] }).then(async () =>
      await validatePackage(pkg.zip, {
        limits: LIMITS,
        verifyKeys: [await importVerifyKey(other.publicPem)],
      })
    )
  );
  assertMatch(wrongSigner.message, /does not verify with any configured key/);
  const wrongKey = await pemPair("X25519");
  const undecryptable = await assertRejects(() =>
    importDecryptionKey(wrongKey.privatePem).then((k) =>
      validatePackage(pkg.zip, { limits: LIMITS, decryptionKey: k })
    )
  );
  assertMatch(undecryptable.message, /payload\.enc does not decrypt/);
  // A changed manifest no longer matches its signature.
  const changed = new Map(entries);
  const m = JSON.parse(new TextDecoder().decode(entries.get("manifest.json")));
  m.sender.name = "mallory";
  changed.set("manifest.json", ENC.encode(JSON.stringify(m)));
  const forged = await assertRejects(() =>
    validatePackage(writeZip(changed), { limits: LIMITS, verifyKeys })
  );
  assertMatch(forged.message, /manifest\.jws does not sign this manifest\.json/);
  const unsigned = await buildPackage({ metadata, dicom, sender: SENDER });
  const required = await assertRejects(() =>
    validatePackage(unsigned.zip, { limits: LIMITS, requireSignature: true })
  );
  assertMatch(required.message, /a signed package \(manifest\.jws\) is required/);
});

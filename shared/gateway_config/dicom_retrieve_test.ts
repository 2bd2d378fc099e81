import assert from "node:assert/strict";
import {
  COMPRESSED_SYNTAXES,
  compressedSyntaxUid,
  DEFAULT_RETRIEVE_SOP_CLASSES,
  DEFAULT_RETRIEVE_TRANSFER_SYNTAXES,
  isUid,
  STORAGE_CLASSES,
  storageClassUid,
} from "./dicom_catalog.ts";
import {
  MAX_PRESENTATION_CONTEXTS,
  requiredContexts,
  uncompressedClasses,
} from "./dicom_retrieve.ts";
import { validateConfigText } from "./text.ts";
import type { ConfigProblem } from "./types.ts";

const FILE = "gw.toml";

function backend(options: string): string {
  return `
[backends.pacs]
service = "dicom_scu"
[backends.pacs.options]
aet = "PACS"
host = "pacs"
port = 104
${options}
`;
}

function problems(text: string): ConfigProblem[] {
  const result = validateConfigText(text, FILE);
  assert.equal(result.config, undefined);
  return result.problems;
}

function options(text: string): Record<string, unknown> {
  const result = validateConfigText(text, FILE);
  assert.deepEqual(result.problems, []);
  return result.config!.backends.pacs.options;
}

Deno.test("catalog: keywords and UIDs are unique and well formed", () => {
  for (const table of [STORAGE_CLASSES, COMPRESSED_SYNTAXES]) {
    const uids = Object.values(table);
    assert.equal(new Set(uids).size, uids.length);
    for (const uid of uids) assert.ok(isUid(uid), uid);
  }
  for (const uid of Object.values(STORAGE_CLASSES)) {
    assert.ok(uid.startsWith("1.2.840.10008.5.1.4.1.1."), uid);
  }
  assert.equal(storageClassUid("CTImageStorage"), "1.2.840.10008.5.1.4.1.1.2");
  assert.equal(storageClassUid("1.2.3.4"), "1.2.3.4", "a private class by its UID");
  assert.equal(storageClassUid("1.2.03"), undefined, "no leading zeros");
  assert.equal(compressedSyntaxUid("RLELossless"), "1.2.840.10008.1.2.5");
  assert.equal(compressedSyntaxUid("1.2.840.10008.1.2.4.70"), "1.2.840.10008.1.2.4.70");
  assert.equal(compressedSyntaxUid("1.2.840.10008.1.2.1"), undefined);
});

Deno.test("dicom_scu retrieval options: defaults fill the 128-context budget", () => {
  const o = options(backend(""));
  assert.deepEqual(o.retrieve_sop_classes, DEFAULT_RETRIEVE_SOP_CLASSES);
  assert.deepEqual(o.retrieve_transfer_syntaxes, DEFAULT_RETRIEVE_TRANSFER_SYNTAXES);
  assert.equal(o.retrieve_sop_class_lookup, true);
  const classes = DEFAULT_RETRIEVE_SOP_CLASSES.map((n) => storageClassUid(n)!);
  assert.equal(uncompressedClasses(classes).length, Object.keys(STORAGE_CLASSES).length);
  const needed = requiredContexts(classes, DEFAULT_RETRIEVE_TRANSFER_SYNTAXES.length);
  assert.equal(needed, 77 + 10 * 5 + 1);
  assert.equal(needed, MAX_PRESENTATION_CONTEXTS);
});

Deno.test("dicom_scu retrieval options: keywords, UIDs and empty lists are accepted as written", () => {
  const o = options(backend(`
retrieve_sop_classes = ["CTImageStorage", "1.2.840.10008.5.1.4.1.1.7", "1.3.6.1.4.1.9590.1"]
retrieve_transfer_syntaxes = ["JPEGLSLossless", "1.2.840.10008.1.2.4.90"]
retrieve_sop_class_lookup = false
`));
  assert.deepEqual(o.retrieve_sop_classes, [
    "CTImageStorage",
    "1.2.840.10008.5.1.4.1.1.7",
    "1.3.6.1.4.1.9590.1",
  ]);
  assert.deepEqual(o.retrieve_transfer_syntaxes, ["JPEGLSLossless", "1.2.840.10008.1.2.4.90"]);
  assert.equal(o.retrieve_sop_class_lookup, false);
  assert.deepEqual(
    options(backend("retrieve_transfer_syntaxes = []")).retrieve_transfer_syntaxes,
    [],
  );
});

Deno.test("dicom_scu retrieval options: unknown names, uncompressed syntaxes, duplicates", () => {
  const at = "backends.pacs.options";
  assert.deepEqual(
    problems(backend(`
retrieve_sop_classes = ["CTImageStorag", "CT", "MRImageStorage", "1.2.840.10008.5.1.4.1.1.4"]
retrieve_transfer_syntaxes = ["JPEGLosslessSv1", "ExplicitVRLittleEndian", "1.2.840.10008.1.2.1.99", "RLELossless", "1.2.840.10008.1.2.5", 7]
`)).map((p) => [p.path, p.message]),
    [
      [
        `${at}.retrieve_sop_classes[0]`,
        "unknown storage SOP class `CTImageStorag`: use a PS3.6 keyword (e.g. CTImageStorage) " +
        "or a UID; did you mean `CTImageStorage`?",
      ],
      [
        `${at}.retrieve_sop_classes[1]`,
        "unknown storage SOP class `CT`: use a PS3.6 keyword (e.g. CTImageStorage) or a UID",
      ],
      [
        `${at}.retrieve_sop_classes[3]`,
        "`1.2.840.10008.5.1.4.1.1.4` is listed twice (as `MRImageStorage`)",
      ],
      [
        `${at}.retrieve_transfer_syntaxes[0]`,
        "unknown compressed transfer syntax `JPEGLosslessSv1`: use a PS3.6 keyword (e.g. " +
        "JPEGLosslessSV1) or its UID; did you mean `JPEGLosslessSV1`?",
      ],
      [
        `${at}.retrieve_transfer_syntaxes[1]`,
        "`ExplicitVRLittleEndian` is not a compressed transfer syntax: Explicit and Implicit VR " +
        "Little Endian are always proposed, Deflated and Big Endian never",
      ],
      [
        `${at}.retrieve_transfer_syntaxes[2]`,
        "`1.2.840.10008.1.2.1.99` is not a compressed transfer syntax: Explicit and Implicit VR " +
        "Little Endian are always proposed, Deflated and Big Endian never",
      ],
      [`${at}.retrieve_transfer_syntaxes[5]`, "expected string, found integer 7"],
    ],
  );
});

Deno.test("dicom_scu retrieval options: over the 128-context budget names the limit", () => {
  const list = (n: number) =>
    Object.keys(STORAGE_CLASSES).slice(0, n).map((k) => `"${k}"`).join(", ");
  const found = problems(backend(`retrieve_sop_classes = [${list(11)}]`));
  assert.deepEqual(found.map((p) => [p.line, p.path, p.message]), [[
    8,
    "backends.pacs.options.retrieve_sop_classes",
    "11 classes x 5 transfer syntaxes need 55 compressed presentation contexts; with one " +
    "uncompressed context for each of 77 storage classes and one for the C-GET model that is " +
    "133, over the 128 an association may propose: list at most 10 classes with 5 syntaxes, or " +
    "fewer syntaxes",
  ]]);
  const o = options(
    backend(
      `retrieve_sop_classes = [${
        list(16)
      }]\nretrieve_transfer_syntaxes = ["JPEGLSLossless", "RLELossless", "JPEG2000"]`,
    ),
  );
  assert.equal((o.retrieve_sop_classes as string[]).length, 16);
  // Classes outside the catalog need their uncompressed contexts too.
  const privateClasses = Array.from({ length: 51 }, (_, i) => `"1.3.6.1.4.1.9590.${i + 1}"`);
  const over = problems(
    backend(
      `retrieve_sop_classes = [${privateClasses.join(", ")}]\nretrieve_transfer_syntaxes = []`,
    ),
  );
  assert.deepEqual(over.map((p) => p.message), [
    "51 classes x 0 transfer syntaxes need 0 compressed presentation contexts; with one " +
    "uncompressed context for each of 128 storage classes and one for the C-GET model that is " +
    "129, over the 128 an association may propose: list fewer classes outside the 77 of the " +
    "catalog",
  ]);
});

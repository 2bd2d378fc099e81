/** The storage contexts of a C-GET: every class uncompressed, then compressed per class and syntax. */
import { assert, assertEquals } from "../../../tests/assert.ts";
import { UNCOMPRESSED } from "../../dicom/mod.ts";
import { retrieveContexts } from "./storage_classes.ts";

const CT = "1.2.840.10008.5.1.4.1.1.2";
const MR = "1.2.840.10008.5.1.4.1.1.4";
const SR = "1.2.840.10008.5.1.4.1.1.88.11";
const JPEG = "1.2.840.10008.1.2.4.70";
const RLE = "1.2.840.10008.1.2.5";

Deno.test("retrieveContexts: uncompressed for every class first, then a context per syntax", () => {
  const contexts = retrieveContexts({
    classes: [CT, MR, SR, CT],
    compressedClasses: [CT, MR],
    compressedSyntaxes: [JPEG, RLE],
    budget: 127,
  });
  assertEquals(contexts, [
    { abstractSyntax: CT, transferSyntaxes: UNCOMPRESSED, scpRole: true },
    { abstractSyntax: MR, transferSyntaxes: UNCOMPRESSED, scpRole: true },
    { abstractSyntax: SR, transferSyntaxes: UNCOMPRESSED, scpRole: true },
    // The SCP role is asked once per class (PS3.7 D.3.3.4), on its uncompressed context.
    { abstractSyntax: CT, transferSyntaxes: [JPEG] },
    { abstractSyntax: CT, transferSyntaxes: [RLE] },
    { abstractSyntax: MR, transferSyntaxes: [JPEG] },
    { abstractSyntax: MR, transferSyntaxes: [RLE] },
  ]);
});

Deno.test("retrieveContexts: the budget keeps coverage, and a class's syntaxes all or none", () => {
  const plan = {
    classes: [CT, MR, SR],
    compressedClasses: [CT, MR],
    compressedSyntaxes: [JPEG, RLE],
  };
  assertEquals(
    retrieveContexts({ ...plan, budget: 6 }).map((c) => [c.abstractSyntax, c.transferSyntaxes]),
    [[CT, UNCOMPRESSED], [MR, UNCOMPRESSED], [SR, UNCOMPRESSED], [CT, [JPEG]], [CT, [RLE]]],
  );
  assertEquals(retrieveContexts({ ...plan, budget: 2 }).map((c) => c.abstractSyntax), [CT, MR]);
  // A compressed class without its uncompressed context (cut by the budget) gets no other.
  const cut = retrieveContexts({ ...plan, classes: [SR], budget: 127 });
  assertEquals(cut.map((c) => c.abstractSyntax), [SR]);
  const plain = retrieveContexts({ ...plan, compressedSyntaxes: [], budget: 127 });
  assertEquals(plain.length, 3);
  assert(plain.every((c) => c.scpRole));
});

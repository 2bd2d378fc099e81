/** Which compressed syntaxes a C-GET offers for a request, and how its contexts are laid out. */
import { assert, assertEquals } from "../../../tests/assert.ts";
import {
  DEFAULT_RETRIEVE_SOP_CLASSES,
  DEFAULT_RETRIEVE_TRANSFER_SYNTAXES,
  STORAGE_CLASSES,
} from "../../../shared/gateway_config/dicom_catalog.ts";
import { SOP, TS } from "../../dicom/mod.ts";
import { RequestEnvelope } from "../../envelope.ts";
import type { RetrieveOutput } from "./operation.ts";
import { acceptableSyntaxes, getContexts, retrieveSettings } from "./proposal.ts";

const JPEG = "1.2.840.10008.1.2.4.70";
const JLS = "1.2.840.10008.1.2.4.80";
const J2K = "1.2.840.10008.1.2.4.90";
const RLE = "1.2.840.10008.1.2.5";
const ALL = [JPEG, JLS, J2K, RLE];

function request(accept?: string, protocol: "http" | "dimse" = "http"): RequestEnvelope {
  return new RequestEnvelope({
    id: "t",
    protocol,
    method: "GET",
    path: "/",
    query: new URLSearchParams(),
    metadata: {},
    endpoint: "e",
    headers: new Headers(accept ? { accept } : {}),
  });
}

Deno.test("acceptableSyntaxes: instances follow the transfer-syntax of application/dicom", () => {
  const instances = { kind: "instances" } as const;
  assertEquals(acceptableSyntaxes(request(), instances, ALL), ALL);
  assertEquals(
    acceptableSyntaxes(request('multipart/related; type="application/dicom"'), instances, ALL),
    [],
    "no transfer-syntax parameter: PS3.18's Explicit VR Little Endian",
  );
  assertEquals(
    acceptableSyntaxes(request('multipart/related; type="*/*"'), instances, ALL),
    ALL,
    "a wildcard range states no preference: as stored",
  );
  assertEquals(acceptableSyntaxes(request("*/*"), instances, ALL), ALL);
  const star = 'multipart/related; type="application/dicom"; transfer-syntax=*';
  assertEquals(acceptableSyntaxes(request(star), instances, ALL), ALL);
  const native = `multipart/related; type="application/dicom"; transfer-syntax=${TS.explicitLE}`;
  assertEquals(acceptableSyntaxes(request(native), instances, ALL), []);
  const two = `${native}, multipart/related; type="application/dicom"; transfer-syntax=${RLE}`;
  assertEquals(acceptableSyntaxes(request(two), instances, ALL), [RLE]);
  const refused = `${native}, multipart/related; type="application/dicom"; transfer-syntax=*; q=0`;
  assertEquals(acceptableSyntaxes(request(refused), instances, ALL), []);
  assertEquals(acceptableSyntaxes(request("application/json"), instances, ALL), ALL);
  assertEquals(acceptableSyntaxes(request(native, "dimse"), instances, ALL), ALL, "DIMSE: all");
});

Deno.test("acceptableSyntaxes: frames and pixel bulk data follow their media types", () => {
  const frames: RetrieveOutput = { kind: "frames", frames: [1, 2] };
  assertEquals(acceptableSyntaxes(request(), frames, ALL), ALL);
  assertEquals(
    acceptableSyntaxes(request('multipart/related; type="image/jls"'), frames, ALL),
    [JLS],
  );
  assertEquals(
    acceptableSyntaxes(request('multipart/related; type="image/*"'), frames, ALL),
    [JPEG, JLS, J2K, RLE],
  );
  const octet = 'multipart/related; type="application/octet-stream"';
  assertEquals(acceptableSyntaxes(request(octet), frames, ALL), [], "native only");
  assertEquals(
    acceptableSyntaxes(request(`${octet}; transfer-syntax=${J2K}`), frames, ALL),
    [J2K],
  );
  assertEquals(
    acceptableSyntaxes(request("image/jpeg"), frames, ALL),
    [],
    "a bare type is one part; two frames were asked for",
  );
  const pixels = { kind: "bulkdata", tagPath: "7FE00010" } as const;
  assertEquals(acceptableSyntaxes(request(octet), pixels, ALL), []);
  const icc = { kind: "bulkdata", tagPath: "00282000" } as const;
  assertEquals(acceptableSyntaxes(request(octet), icc, ALL), ALL, "not pixel data: any syntax");
  assertEquals(acceptableSyntaxes(request(octet), { kind: "metadata" }, ALL), ALL);
});

Deno.test("getContexts: the model, every catalog class uncompressed, then the compressed", () => {
  const { sopClasses, transferSyntaxes } = retrieveSettings({
    retrieve_sop_classes: ["CTImageStorage", "1.2.840.10008.5.1.4.1.1.4", "1.3.6.1.4.1.9590.1"],
    retrieve_transfer_syntaxes: ["JPEGLosslessSV1", "RLELossless"],
  });
  assertEquals(sopClasses, [
    "1.2.840.10008.5.1.4.1.1.2",
    "1.2.840.10008.5.1.4.1.1.4",
    "1.3.6.1.4.1.9590.1",
  ]);
  assertEquals(transferSyntaxes, [JPEG, RLE]);
  const contexts = getContexts(SOP.studyRootGet, sopClasses, transferSyntaxes);
  assertEquals(contexts[0].abstractSyntax, SOP.studyRootGet);
  const catalog = Object.values(STORAGE_CLASSES);
  const uncompressed = contexts.slice(1, catalog.length + 2);
  assertEquals(uncompressed.map((c) => c.abstractSyntax), [...catalog, "1.3.6.1.4.1.9590.1"]);
  assert(uncompressed.every((c) => c.transferSyntaxes.length === 2 && c.scpRole));
  assertEquals(
    contexts.slice(catalog.length + 2).map((c) => [c.abstractSyntax, ...c.transferSyntaxes]),
    sopClasses.flatMap((uid) => [[uid, JPEG], [uid, RLE]]),
  );
  assert(contexts.length <= 128);
  const narrowed = getContexts(SOP.studyRootGet, [sopClasses[0]], ALL, [sopClasses[0]]);
  assertEquals(narrowed.length, 1 + 1 + ALL.length);
});

Deno.test("getContexts: the default options fill the 128 contexts exactly", () => {
  const { sopClasses, transferSyntaxes } = retrieveSettings({
    retrieve_sop_classes: [...DEFAULT_RETRIEVE_SOP_CLASSES],
    retrieve_transfer_syntaxes: [...DEFAULT_RETRIEVE_TRANSFER_SYNTAXES],
  });
  const contexts = getContexts(SOP.studyRootGet, sopClasses, transferSyntaxes);
  assertEquals(contexts.length, 128);
  assertEquals(contexts.filter((c) => c.transferSyntaxes.length === 1).length, 50);
});

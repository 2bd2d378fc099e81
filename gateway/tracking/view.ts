/**
 * What a client needs to show a stage's body: JSON and XML as text (the client pretty-prints),
 * a DICOM Part 10 file as a table of its top-level elements (read with dcmjs, loaded with the first
 * one shown; pixel data as its size), anything else binary as its size and a hex preview.
 */
import type { DicomJson } from "../dicom/mod.ts";
import type { ContentView, DicomTagRow } from "./types.ts";

/** Bytes shown as hex for a binary body. */
const HEX_BYTES = 512;
/** Longest value shown in a tag row. */
const MAX_VALUE = 256;
/** Value representations of binary values (shown as their size). */
const BINARY_VRS = new Set(["OB", "OW", "OF", "OD", "OL", "OV", "UN"]);
/** Most rows of a tag table. */
const MAX_ROWS = 2000;

const TEXT_TYPE =
  /^(text\/|application\/(.*\+)?(json|xml|x-www-form-urlencoded|hl7-v2|edi-x12|csv|javascript)\b|application\/x-hl7|x-application\/hl7)/i;

/** The view of a body of `contentType`. */
export async function viewOf(body: Uint8Array, contentType: string | null): Promise<ContentView> {
  if (body.byteLength === 0) return { kind: "empty" };
  const type = (contentType ?? "").split(";")[0].trim().toLowerCase();
  if (type === "application/dicom" || isPart10(body)) {
    const tags = await dicomTags(body);
    if (tags) return { kind: "dicom", tags };
  }
  // A type known to be text, or any other whose bytes look like text (HL7 ER7, CSV, EDI…).
  if (TEXT_TYPE.test(type) || looksLikeText(body)) {
    const text = new TextDecoder("utf-8", { fatal: false }).decode(body);
    const kind = /json/.test(type) || (type === "" && /^\s*[[{]/.test(text))
      ? "json"
      : /xml/.test(type) || (type === "" && /^\s*</.test(text))
      ? "xml"
      : "text";
    return { kind, text };
  }
  return { kind: "binary", hex: hexOf(body.subarray(0, HEX_BYTES)) };
}

function isPart10(body: Uint8Array): boolean {
  return body.byteLength > 132 && body[128] === 0x44 && body[129] === 0x49 &&
    body[130] === 0x43 && body[131] === 0x4d;
}

function looksLikeText(body: Uint8Array): boolean {
  const n = Math.min(body.byteLength, 1024);
  for (let i = 0; i < n; i++) {
    const b = body[i];
    if (b === 0 || (b < 9) || (b > 13 && b < 32)) return false;
  }
  return true;
}

/** Hex with a space between bytes and a newline every 16. */
export function hexOf(bytes: Uint8Array): string {
  let out = "";
  for (let i = 0; i < bytes.length; i++) {
    out += bytes[i].toString(16).padStart(2, "0");
    out += i % 16 === 15 ? "\n" : " ";
  }
  return out.trimEnd();
}

/** The elements of a Part 10 file (meta header and dataset), or undefined when it does not parse. */
export async function dicomTags(body: Uint8Array): Promise<DicomTagRow[] | undefined> {
  const { keywordOf, parseP10, readDataset, toDicomJson } = await import("../dicom/mod.ts");
  try {
    const file = parseP10(body);
    const rows: DicomTagRow[] = [];
    const meta: [string, string, string | undefined][] = [
      ["0002", "0002", file.meta.sopClassUid],
      ["0002", "0003", file.meta.sopInstanceUid],
      ["0002", "0010", file.meta.transferSyntax],
      ["0002", "0012", file.meta.implementationClassUid],
    ];
    for (const [group, element, value] of meta) {
      if (value === undefined) continue;
      const keyword = keywordOf(group + element) ?? "";
      rows.push({ tag: `(${group},${element})`, keyword, vr: "UI", value: cut(value) });
    }
    const dict = readDataset(file.dataset, file.meta.transferSyntax);
    const json: DicomJson = toDicomJson(dict, { inlineLimit: 64 });
    for (const [tag, el] of Object.entries(json)) {
      if (rows.length >= MAX_ROWS) break;
      rows.push({
        tag: `(${tag.slice(0, 4)},${tag.slice(4)})`,
        keyword: keywordOf(tag) ?? "",
        vr: el.vr,
        value: valueText(el, dict[tag]?.Value),
      });
    }
    return rows;
  } catch {
    return undefined;
  }
}

function valueText(
  el: { vr: string; Value?: unknown[]; InlineBinary?: string; BulkDataURI?: string },
  raw: unknown,
): string {
  if (el.vr === "SQ") return `${el.Value?.length ?? 0} item(s)`;
  if (BINARY_VRS.has(el.vr) || el.InlineBinary !== undefined || el.BulkDataURI !== undefined) {
    return `${binarySize(raw)} bytes`;
  }
  if (!el.Value) return "";
  return cut(
    el.Value.map((v) =>
      v !== null && typeof v === "object"
        ? (v as { Alphabetic?: string }).Alphabetic ?? JSON.stringify(v)
        : String(v)
    ).join("\\"),
  );
}

function binarySize(values: unknown): number {
  let n = 0;
  for (const v of Array.isArray(values) ? values : []) {
    if (v instanceof ArrayBuffer || ArrayBuffer.isView(v)) n += v.byteLength;
  }
  return n;
}

function cut(s: string): string {
  return s.length > MAX_VALUE ? `${s.slice(0, MAX_VALUE)}…` : s;
}

/** Acknowledgements: building an ACK for a message's header and reading one back. */
import { Hl7Error } from "./error.ts";
import { DEFAULT_DELIMITERS, delimitersOf, type Hl7Delimiters } from "./delimiters.ts";
import { escapeHl7, unescapeHl7 } from "./escape.ts";
import { headerOfFields, type Hl7Header } from "./header.ts";
import { readDelimiters } from "./delimiters.ts";
import { rawFields, splitSegments, textStart } from "./segments.ts";
import { DEFAULT_HL7_LIMITS } from "./limits.ts";

/** MSA-1: original mode `AA`/`AE`/`AR`, enhanced mode (accept) `CA`/`CE`/`CR`. */
export type AckCode = "AA" | "AE" | "AR" | "CA" | "CE" | "CR";

const ACK_CODES: ReadonlySet<string> = new Set(["AA", "AE", "AR", "CA", "CE", "CR"]);

/** One problem an ACK reports in an ERR segment. */
export interface Hl7ErrorDetail {
  /** The segment's name, e.g. `PID`. */
  segment?: string;
  /** Which occurrence of the segment (1-based). */
  sequence?: number;
  /** The field's number. */
  field?: number;
  /**
   * HL7 table 0357: `0` accepted, `100` segment sequence error, `101` required field missing,
   * `102` data type error, `103` table value not found, `200` unsupported message type, `201`
   * unsupported event code, `202` unsupported processing id, `203` unsupported version id, `207`
   * application internal error.
   */
  code: string;
  /** ERR-4 (v2.5+): error, warning or information; `E` when not given. */
  severity?: "E" | "W" | "I";
  /** What went wrong, for people. */
  text: string;
}

/** How an ACK is built. */
export interface AckOptions {
  /** MSA-1. */
  code: AckCode;
  /** A sentence for MSA-3 (before v2.7) or an ERR segment (v2.7+, where MSA-3 is withdrawn). */
  text?: string;
  /** ERR segments. */
  errors?: Hl7ErrorDetail[];
  /** The ACK's own MSH-10; a new random id by default. */
  controlId?: string;
  /** MSH-7's time; now by default. */
  now?: Date;
}

/** An ACK as read back. */
export interface ReadAck {
  /** MSA-1. */
  code: AckCode;
  /** MSA-2: the control id of the message acknowledged. */
  controlId: string;
  /** MSA-3 unescaped, or when it is empty the ERR texts joined with `; `. */
  text: string;
  /** The ERR segments. */
  errors: Hl7ErrorDetail[];
  /** The ACK's own header. */
  header: Hl7Header;
}

/** Table 0357's names of the codes an ACK most often carries. */
const CODE_NAMES: Readonly<Record<string, string>> = {
  "0": "Message accepted",
  "100": "Segment sequence error",
  "101": "Required field missing",
  "102": "Data type error",
  "103": "Table value not found",
  "104": "Value too long",
  "200": "Unsupported message type",
  "201": "Unsupported event code",
  "202": "Unsupported processing id",
  "203": "Unsupported version id",
  "204": "Unknown key identifier",
  "205": "Duplicate key identifier",
  "206": "Application record locked",
  "207": "Application internal error",
};

/** A version string's numbers, e.g. `2.5.1` -> [2, 5, 1]; empty or odd versions count as 2.5. */
function versionParts(version: string): number[] {
  const m = /^(\d+)\.(\d+)(?:\.(\d+))?/.exec(version);
  return m === null ? [2, 5, 0] : [Number(m[1]), Number(m[2]), Number(m[3] ?? 0)];
}

/** True when `version` is at least major.minor.patch. */
function atLeast(version: string, major: number, minor: number, patch = 0): boolean {
  const [a, b, c] = versionParts(version);
  return a !== major ? a > major : b !== minor ? b > minor : c >= patch;
}

/** HL7's DTM for a time, in UTC: `YYYYMMDDHHMMSS+0000`. */
export function hl7Timestamp(now: Date): string {
  const iso = now.toISOString(); // 2024-01-02T03:04:05.678Z
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}${iso.slice(11, 13)}${
    iso.slice(14, 16)
  }${iso.slice(17, 19)}+0000`;
}

/** A new control id: 20 hexadecimal characters (MSH-10 holds 20 before v2.7). */
export function newControlId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(10));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}

/** One ERR segment in the layout of the version. */
function errSegment(e: Hl7ErrorDetail, version: string, d: Hl7Delimiters): string {
  const f = d.field;
  const c = d.component;
  const s = d.subcomponent;
  const text = escapeHl7(e.text, d);
  const loc = [e.segment ?? "", e.sequence?.toString() ?? "", e.field?.toString() ?? ""];
  const name = escapeHl7(CODE_NAMES[e.code] ?? "", d);
  const code = escapeHl7(e.code, d);
  if (!atLeast(version, 2, 5)) {
    // ERR-1 (ELD): segment ^ sequence ^ field ^ code & text & HL70357.
    return `ERR${f}${loc.join(c)}${c}${code}${s}${text}${s}HL70357`;
  }
  const where = trimEnd(loc, c);
  const severity = e.severity ?? "E";
  // ERR-2 location, ERR-3 code^name^HL70357, ERR-4 severity, ERR-8 user message.
  return `ERR${f}${f}${where}${f}${code}${c}${name}${c}HL70357${f}${severity}${f}${f}${f}${f}${text}`;
}

/** Components joined, trailing empty ones left out. */
function trimEnd(parts: string[], sep: string): string {
  let n = parts.length;
  while (n > 0 && parts[n - 1] === "") n--;
  return parts.slice(0, n).join(sep);
}

/**
 * An ER7 ACK for a message (segments joined with `\r`, no MLLP framing), in the original's
 * delimiters and version: sending and receiving application and facility swapped, MSH-9
 * `ACK^<trigger>^ACK`, MSA-1 the code, MSA-2 the original's control id, one ERR per error (v2.5+
 * layout with ERR-2/3/4/8; ERR-1 before v2.5). Without a header (the message could not be read):
 * the default delimiters `|^~\&`, version 2.5, MSA-2 empty.
 */
export function buildAck(header: Hl7Header | undefined, ack: AckOptions): string {
  let d = DEFAULT_DELIMITERS;
  if (header !== undefined) {
    try {
      d = delimitersOf(header.fieldSeparator, header.encodingCharacters);
    } catch {
      header = undefined;
    }
  }
  const f = d.field;
  const c = d.component;
  const version = header?.version || "2.5";
  const trigger = header?.triggerEvent ?? "";
  const type = trigger === ""
    ? "ACK"
    : atLeast(version, 2, 3, 1)
    ? `ACK${c}${trigger}${c}ACK`
    : `ACK${c}${trigger}`;
  const msh = [
    "MSH",
    d.encoding,
    header?.receivingApplication ?? "",
    header?.receivingFacility ?? "",
    header?.sendingApplication ?? "",
    header?.sendingFacility ?? "",
    hl7Timestamp(ack.now ?? new Date()),
    "",
    type,
    escapeHl7(ack.controlId ?? newControlId(), d),
    header?.processingId || "P",
    version,
  ].join(f);
  const errors = [...(ack.errors ?? [])];
  let msa = `MSA${f}${ack.code}${f}${header?.controlId ?? ""}`;
  if (ack.text !== undefined && ack.text !== "") {
    if (!atLeast(version, 2, 7)) msa += `${f}${escapeHl7(ack.text, d)}`;
    else if (errors.length === 0) {
      const accepted = ack.code === "AA" || ack.code === "CA";
      errors.push({ code: accepted ? "0" : "207", severity: accepted ? "I" : "E", text: ack.text });
    }
  }
  return [msh, msa, ...errors.map((e) => errSegment(e, version, d))].join("\r");
}

/** A positive integer from a component, or undefined. */
function numberOf(s: string | undefined): number | undefined {
  if (s === undefined || !/^\d{1,9}$/.test(s)) return undefined;
  return Number(s);
}

/** An error detail without the keys whose values are missing. */
function detail(
  parts: { segment: string; sequence?: number; field?: number; code: string; severity?: string },
  text: string,
): Hl7ErrorDetail {
  const out: Hl7ErrorDetail = { code: parts.code, text };
  if (parts.segment !== "") out.segment = parts.segment;
  if (parts.sequence !== undefined) out.sequence = parts.sequence;
  if (parts.field !== undefined) out.field = parts.field;
  if (parts.severity === "E" || parts.severity === "W" || parts.severity === "I") {
    out.severity = parts.severity;
  }
  return out;
}

/** The errors of one ERR segment (ERR-1 may repeat in the old layout). */
function errorsOf(fields: string[], d: Hl7Delimiters): Hl7ErrorDetail[] {
  const f = (n: number) => fields[n] ?? "";
  const text = (s: string) => unescapeHl7(s, d);
  if (f(2) !== "" || f(3) !== "") {
    const loc = f(2).split(d.repetition)[0].split(d.component);
    const code = f(3).split(d.repetition)[0].split(d.component);
    const message = f(8) || f(7) || code[1] || "";
    return [
      detail({
        segment: loc[0] ?? "",
        sequence: numberOf(loc[1]),
        field: numberOf(loc[2]),
        code: text(code[0] ?? ""),
        severity: f(4),
      }, text(message)),
    ];
  }
  return f(1).split(d.repetition).filter((r) => r !== "").map((rep) => {
    const loc = rep.split(d.component);
    const code = (loc[3] ?? "").split(d.subcomponent);
    return detail(
      {
        segment: loc[0] ?? "",
        sequence: numberOf(loc[1]),
        field: numberOf(loc[2]),
        code: text(code[0]),
      },
      text(code[1] ?? ""),
    );
  });
}

/** Read an ACK: its header, MSA and ERR segments (throws `no_msa` when there is no MSA). */
export function readAck(text: string): ReadAck {
  if (text.length > DEFAULT_HL7_LIMITS.maxBytes) {
    throw new Hl7Error(
      "too_large",
      `the ACK is longer than ${DEFAULT_HL7_LIMITS.maxBytes} characters`,
    );
  }
  const start = textStart(text);
  if (text.slice(start, start + 3) !== "MSH") {
    throw new Hl7Error("no_msh", "the ACK does not start with an MSH segment", { segment: "MSH" });
  }
  const d = readDelimiters(text, start);
  const { lines } = splitSegments(text, start, DEFAULT_HL7_LIMITS.maxSegments);
  const header = headerOfFields(rawFields(lines[0], d.field), d);
  let msa: string[] | undefined;
  const errors: Hl7ErrorDetail[] = [];
  for (const line of lines) {
    const name = line.slice(0, 3);
    if (name === "MSA" && msa === undefined) msa = rawFields(line, d.field);
    else if (name === "ERR") errors.push(...errorsOf(rawFields(line, d.field), d));
  }
  if (msa === undefined) {
    throw new Hl7Error("no_msa", "the message has no MSA segment", { segment: "MSA" });
  }
  const code = msa[1] ?? "";
  if (!ACK_CODES.has(code)) {
    throw new Hl7Error("bad_ack", `MSA-1 ${JSON.stringify(code)} is not an acknowledgment code`, {
      segment: "MSA",
      field: 1,
    });
  }
  let message = unescapeHl7(msa[3] ?? "", d);
  if (message === "") message = errors.map((e) => e.text).filter((t) => t !== "").join("; ");
  return { code: code as AckCode, controlId: msa[2] ?? "", text: message, errors, header };
}

/**
 * The one use of a private dcmjs API: `DicomMessage._read`, the dataset decoder under dcmjs's
 * public readers. The public ones do not fit: `DicomMessage.readFile` wants a whole Part 10 file
 * (preamble and meta group, which the gateway has parsed already), and `DicomMessage.read` logs a
 * deprecation warning on every call and cannot stop at the first element past a tag
 * (`stopOnGreaterTag`). Nothing else in the tree calls it; dcmjs_read_test.ts checks what the
 * gateway relies on (the dictionary it returns, `untilTag`, `includeUntilTagValue`,
 * `stopOnGreaterTag`, the three uncompressed syntaxes) and names the dcmjs version when it changes.
 *
 * @module
 */
import dcmjs from "dcmjs";

/** What {@link decodeDataset} stops at, and how it treats errors (dcmjs's `_read` options). */
export interface DecodeOptions {
  /** Log and go on past what dcmjs cannot decode (an unknown character set) instead of throwing. */
  ignoreErrors?: boolean;
  /** Stop at this tag (8 uppercase hex digits): its value is left out... */
  untilTag?: string;
  /** ...unless this is set (the value read, then stop). */
  includeUntilTagValue?: boolean;
  /** Also stop before the first element past `untilTag` when the dataset lacks it. */
  stopOnGreaterTag?: boolean;
}

type Read = (stream: unknown, syntax: string, options: DecodeOptions) => unknown;

/** The dcmjs version in use (from where the import resolved), or "of unknown version". */
export function dcmjsVersion(): string {
  try {
    const match = /dcmjs[@/](\d+\.\d+\.\d+[\w.-]*)/.exec(import.meta.resolve("dcmjs"));
    if (match) return match[1];
  } catch {
    // not resolvable by name here (a compiled binary)
  }
  return "of unknown version";
}

/**
 * Decodes dataset bytes (no preamble or meta group) in one of the uncompressed transfer syntaxes
 * dcmjs knows (implicit VR LE, explicit VR LE, explicit VR BE) to dcmjs's tag-keyed dictionary
 * (`{ "00100010": { vr, Value, _rawValue } }`).
 */
export function decodeDataset(
  bytes: ArrayBuffer,
  syntax: string,
  options: DecodeOptions,
): Record<string, { vr: string; Value?: unknown[]; _rawValue?: unknown }> {
  const message = dcmjs.data.DicomMessage as unknown as { _read?: Read };
  if (typeof message._read !== "function") {
    throw new Error(
      `dcmjs ${dcmjsVersion()} has no DicomMessage._read (a private API the gateway decodes ` +
        `datasets with): pin the version deno.json had, or adapt gateway/dicom/dcmjs_read.ts`,
    );
  }
  const stream = new dcmjs.data.ReadBufferStream(bytes);
  return message._read(stream, syntax, options) as Record<
    string,
    { vr: string; Value?: unknown[]; _rawValue?: unknown }
  >;
}

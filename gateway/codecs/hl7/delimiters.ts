/** The delimiters of an ER7 text, read from a header segment's first two fields. */
import { Hl7Error } from "./error.ts";

/** The separators and escape character of one message (or batch). */
export interface Hl7Delimiters {
  /** MSH-1: between fields, e.g. `|`. */
  field: string;
  /** MSH-2 as written, e.g. `^~\&` (v2.7+ may add a fifth, the truncation character `#`). */
  encoding: string;
  /** MSH-2's first character: between components, e.g. `^`. */
  component: string;
  /** MSH-2's second character: between repetitions, e.g. `~`. */
  repetition: string;
  /** MSH-2's third character: starts and ends an escape sequence, e.g. `\`. */
  escape: string;
  /** MSH-2's fourth character: between sub-components, e.g. `&`. */
  subcomponent: string;
  /** MSH-2's fifth character (v2.7+), the truncation mark `#`; empty when absent. */
  truncation: string;
}

/** The delimiters most messages use: `|^~\&`. */
export const DEFAULT_DELIMITERS: Hl7Delimiters = Object.freeze({
  field: "|",
  encoding: "^~\\&",
  component: "^",
  repetition: "~",
  escape: "\\",
  subcomponent: "&",
  truncation: "",
});

/** True for characters that cannot be delimiters: letters, digits, CR, LF, space. */
function unusable(c: string): boolean {
  return /[A-Za-z0-9\r\n ]/.test(c);
}

/**
 * The delimiters of a header segment (`MSH`, `FHS` or `BHS`) that starts at `start` in `text`:
 * MSH-1 is the character after the name, MSH-2 runs to the next field separator (or the end of the
 * segment). Four or five distinct characters, none a letter, digit, space or line break.
 */
export function readDelimiters(text: string, start: number, segment = "MSH"): Hl7Delimiters {
  const field = text.charAt(start + 3);
  if (field === "" || unusable(field)) {
    throw new Hl7Error("bad_delimiters", `${segment}-1 is not a usable field separator`, {
      segment,
      field: 1,
    });
  }
  let end = start + 4;
  while (end < text.length && end < start + 10) {
    const c = text.charAt(end);
    if (c === field || c === "\r" || c === "\n") break;
    end++;
  }
  const encoding = text.slice(start + 4, end);
  const atEnd = end >= text.length || text.charAt(end) === "\r" || text.charAt(end) === "\n";
  const bad = (why: string) =>
    new Hl7Error("bad_delimiters", `${segment}-2 ${why}`, { segment, field: 2 });
  if (encoding.length < 4 || encoding.length > 5) {
    throw bad(`must hold 4 or 5 encoding characters, found ${JSON.stringify(encoding)}`);
  }
  if (!atEnd && text.charAt(end) !== field) throw bad("is not followed by the field separator");
  const seen = new Set<string>([field]);
  for (const c of encoding) {
    if (unusable(c)) throw bad(`holds an unusable character ${JSON.stringify(c)}`);
    if (seen.has(c)) throw bad(`repeats the character ${JSON.stringify(c)}`);
    seen.add(c);
  }
  return {
    field,
    encoding,
    component: encoding[0],
    repetition: encoding[1],
    escape: encoding[2],
    subcomponent: encoding[3],
    truncation: encoding[4] ?? "",
  };
}

/** The delimiters for a field separator and encoding characters (validated as in a header). */
export function delimitersOf(field: string, encoding: string): Hl7Delimiters {
  return readDelimiters(`MSH${field}${encoding}${field}`, 0);
}

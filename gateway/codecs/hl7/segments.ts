/**
 * Segments of an ER7 text: one pass that finds where the text starts (after a byte order mark
 * and blank space), the segment terminator in use and each segment's span.
 */
import { Hl7Error } from "./error.ts";

/** The segments of a text, as written, with how they were terminated. */
export interface SegmentLines {
  /** Each segment's text, without its terminator (blank lines dropped). */
  lines: string[];
  /** The first terminator found: `\r` (HL7's), `\n` or `\r\n`; `\r` when there is none. */
  terminator: "\r" | "\n" | "\r\n";
  /** True when the text's last segment is followed by a terminator. */
  terminated: boolean;
}

/** The index of the first character after a byte order mark and blank space. */
export function textStart(text: string): number {
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c === 0xfeff || c === 32 || c === 9 || c === 10 || c === 13 || c === 11 || c === 12) i++;
    else break;
  }
  return i;
}

/** Split `text` from `start` into segments (CR, LF and CRLF all end one), refusing past `maxSegments`. */
export function splitSegments(text: string, start: number, maxSegments: number): SegmentLines {
  const lines: string[] = [];
  let terminator: SegmentLines["terminator"] | undefined;
  let terminated = false;
  let i = start;
  const n = text.length;
  while (i < n) {
    let j = i;
    while (j < n) {
      const c = text.charCodeAt(j);
      if (c === 13 || c === 10) break;
      j++;
    }
    if (j > i) {
      if (lines.length >= maxSegments) {
        throw new Hl7Error("too_many_segments", `more than ${maxSegments} segments`);
      }
      lines.push(text.slice(i, j));
    }
    if (j >= n) {
      terminated = false;
      break;
    }
    const crlf = text.charCodeAt(j) === 13 && text.charCodeAt(j + 1) === 10;
    terminator ??= crlf ? "\r\n" : text.charCodeAt(j) === 13 ? "\r" : "\n";
    i = j + (crlf ? 2 : 1);
    terminated = true;
  }
  return { lines, terminator: terminator ?? "\r", terminated };
}

/** The fields of a segment's text by HL7 number (index 0 is the name); MSH-style headers get MSH-1. */
export function rawFields(line: string, fieldSeparator: string): string[] {
  const parts = line.split(fieldSeparator);
  if (isHeaderSegment(parts[0])) parts.splice(1, 0, fieldSeparator);
  return parts;
}

/** True for the segments whose first field is the field separator itself: MSH, FHS, BHS. */
export function isHeaderSegment(name: string): boolean {
  return name === "MSH" || name === "FHS" || name === "BHS";
}

/**
 * CSV codec (text/csv): an array of row objects keyed by the header row, and back.
 *
 * Formula injection (OWASP "CSV Injection"): a spreadsheet runs a cell that starts with `=`, `+`,
 * `-` or `@` as a formula, also after leading spaces (` =1+2`), and tab, carriage return or line
 * feed can hide such a prefix. Every header name and value that starts like that gets a single
 * quote `'` in front (`=1+2` becomes `'=1+2`, ` @SUM(A1)` becomes `' @SUM(A1)`, `-5` becomes `'-5`):
 * on decoding, so the data cannot carry a live formula to whatever consumes it downstream, and on
 * encoding for string cells (numbers stay numbers), so data from JSON or XML cannot either. A
 * value escaped once starts with `'` and is never escaped again.
 */
import { Buffer } from "node:buffer";
import { parse } from "csv-parse/stream";
import type { ContentLimits } from "../../shared/gateway_config/mod.ts";
import { causedError, GatewayError } from "../errors.ts";
import { CsvLimitScanner } from "./csv_limits.ts";
import { setOwn } from "./form.ts";
import { decodeText, isUtf8Charset } from "./media_type.ts";
import { TimeSlice } from "./time_slice.ts";

/** Characters that start a formula for a spreadsheet: = + - @ and the hiding TAB, CR, LF. */
const FORMULA_START = new Uint8Array(128);
for (const c of "=+-@\t\r\n") FORMULA_START[c.charCodeAt(0)] = 1;

/** True for a space a spreadsheet skips before a formula: U+0020, no-break space, ideographic. */
function isLeadingSpace(c: number): boolean {
  return c === 0x20 || c === 0xa0 || c === 0x3000;
}

/** True when `value` starts like a formula, leading spaces skipped (see the top of this file). */
export function startsLikeFormula(value: string): boolean {
  let i = 0;
  while (i < value.length && isLeadingSpace(value.charCodeAt(i))) i++;
  const c = value.charCodeAt(i);
  return c < 128 && FORMULA_START[c] === 1;
}

/** Prefix a cell with `'` when it starts like a formula (see the top of this file). */
export function escapeCsvCell(value: string): string {
  return startsLikeFormula(value) ? "'" + value : value;
}

/**
 * Escape the header names and refuse duplicates (a row object cannot hold both values); an error
 * thrown here comes back out of csv-parse as is.
 */
function headerColumns(header: string[]): string[] {
  const names = header.map(escapeCsvCell);
  const seen = new Set<string>();
  for (const name of names) {
    if (seen.has(name)) throw new Error(`duplicate column name ${JSON.stringify(name)} on line 1`);
    seen.add(name);
  }
  return names;
}

/** The limits the CSV decoder enforces (see `[proxy.content_limits]`). */
export type CsvLimits = Pick<
  ContentLimits,
  "max_csv_rows" | "max_csv_columns" | "max_csv_cell_bytes"
>;

/**
 * Bytes handed to csv-parse per step: about 1 ms of parsing on an idle core (rows built
 * included), so a time slice (time_slice.ts) overshoots its budget by little.
 */
const CHUNK_BYTES = 16 * 1024;

/**
 * Parse a CSV body: the first row names the columns, each further row becomes an object.
 * Blank lines are skipped; a UTF-8 BOM is dropped; an empty body is `[]`; CRLF, LF and a lone CR
 * all end a row. Throws 400 `invalid_csv` (ragged rows, bad quoting, duplicate columns; the
 * message names the line), 413 `too_many_csv_rows` for more than `max_csv_rows` data rows
 * (exactly `max_csv_rows` passes), 413 `too_many_csv_columns` and 413 `csv_cell_too_large`.
 *
 * The body is parsed in chunks, and the event loop is handed back between time slices: a 10 MB
 * body within every limit takes 0.6 s (10,000 rows of 100 cells) to 2.5 s (3,000 rows of 1,000
 * cells) of parsing on a busy two-core machine, which in one piece would hold every other request
 * of this isolate. The limits are checked on the raw bytes of each chunk before the
 * parser reads it (csv_limits.ts), and the row limit as each row is built, so work stops at the
 * first row, column or cell over a limit.
 */
export async function decodeCsv(
  bytes: Uint8Array,
  charset: string | undefined,
  limits: CsvLimits,
): Promise<Record<string, string>[]> {
  if (bytes.byteLength === 0) return [];
  // csv-parse works on Buffers: wrap UTF-8 bytes without copying; decode other charsets first.
  const input = isUtf8Charset(charset)
    ? Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    : Buffer.from(decodeText(bytes, charset), "utf8");
  const maxRows = limits.max_csv_rows;
  const rows: Record<string, string>[] = [];
  let names: string[] | null = null;
  /** Each record as csv-parse finishes it: the header, then rows built and escaped at once. */
  const onRecord = (record: string[]): null => {
    if (names === null) {
      names = headerColumns(record);
      return null;
    }
    if (rows.length >= maxRows) {
      throw new GatewayError(
        413,
        "too_many_csv_rows",
        `CSV body has more than max_csv_rows of ${maxRows} data rows`,
      );
    }
    const row: Record<string, string> = {};
    for (let i = 0; i < names.length; i++) {
      const value = record[i];
      setOwn(row, names[i], startsLikeFormula(value) ? "'" + value : value);
    }
    rows.push(row);
    // Nothing goes to the stream's readable side: rows are collected here.
    return null;
  };
  const parser = parse({
    bom: true,
    skip_empty_lines: true,
    relax_column_count: false,
    // Given, not discovered: discovery allocates three Buffers per byte of the first row (a
    // header of 1,000,000 columns took 4 s), and then holds to the first kind it met.
    record_delimiter: ["\r\n", "\n", "\r"],
    on_record: onRecord,
  });
  const writer = parser.writable.getWriter();
  const scanner = new CsvLimitScanner(input, limits.max_csv_columns, limits.max_csv_cell_bytes);
  const slice = new TimeSlice();
  try {
    for (let at = 0; at < input.byteLength; at += CHUNK_BYTES) {
      const end = Math.min(at + CHUNK_BYTES, input.byteLength);
      scanner.scanTo(end);
      // An error of the parser (or thrown by onRecord) rejects this write or a later one.
      await writer.write(input.subarray(at, end));
      await slice.pause();
    }
    await writer.close();
  } catch (e) {
    throw await failure(writer, e);
  }
  return rows;
}

/**
 * What a failed parse answers: a limit's 413 as it is, anything else 400 `invalid_csv`. A write
 * into a stream that the parser (or `onRecord`) failed rejects with its error, but a close
 * rejects with a TypeError: the stream's `closed` promise has the error that stopped it. Aborting
 * first stops a stream that is still open (a 413 of the scanner) with `e` itself.
 */
async function failure(writer: WritableStreamDefaultWriter, e: unknown): Promise<GatewayError> {
  writer.abort(e).catch(() => {});
  const cause = await writer.closed.then(() => e, (stored: unknown) => stored);
  if (cause instanceof GatewayError) return cause;
  const reason = cause instanceof Error ? cause.message : String(cause);
  return causedError(400, "invalid_csv", `malformed CSV body: ${reason}`, cause);
}

/** A field quoted per RFC 4180 when it holds a comma, a double quote, CR or LF. */
function csvField(value: unknown): string {
  if (value === null || value === undefined) return "";
  const s = typeof value === "string" ? escapeCsvCell(value) : String(value);
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c === 44 || c === 34 || c === 10 || c === 13) return `"${s.replaceAll('"', '""')}"`;
  }
  return s;
}

/** True for a value CSV can hold in one cell. */
function isCell(value: unknown): boolean {
  return value === null || value === undefined || typeof value === "string" ||
    typeof value === "number" || typeof value === "boolean";
}

/**
 * Encode rows as CSV (RFC 4180: CRLF line ends, quoting when needed), or null when the data is
 * not an array of flat objects. The header is the union of the rows' keys in first-seen order; a
 * row without a key leaves that cell empty. An empty array encodes as an empty body.
 */
export function encodeCsv(data: unknown): string | null {
  if (!Array.isArray(data)) return null;
  const columns: string[] = [];
  const known = new Set<string>();
  for (const row of data) {
    if (row === null || typeof row !== "object" || Array.isArray(row)) return null;
    for (const key in row) {
      if (!isCell((row as Record<string, unknown>)[key])) return null;
      if (!known.has(key)) {
        known.add(key);
        columns.push(key);
      }
    }
  }
  if (columns.length === 0) return "";
  let out = columns.map(csvField).join(",") + "\r\n";
  for (const row of data as Record<string, unknown>[]) {
    let line = "";
    for (let c = 0; c < columns.length; c++) {
      if (c > 0) line += ",";
      const key = columns[c];
      line += csvField(Object.hasOwn(row, key) ? row[key] : undefined);
    }
    out += line + "\r\n";
  }
  return out;
}

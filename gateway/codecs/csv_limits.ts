/**
 * The CSV structure limits, checked on the raw bytes before the parser sees them: fields per row
 * (`max_csv_columns`) and bytes per cell (`max_csv_cell_bytes`). The scan runs ahead of csv-parse
 * chunk by chunk, so a body over a limit is refused as soon as the offending row or cell starts,
 * after a few nanoseconds per byte, instead of after the parser has built the whole record (a
 * header of 1,000,000 columns used to cost 12 s).
 *
 * The grammar is RFC 4180's, as csv-parse reads it: `,` separates fields, CR, LF or CRLF ends a
 * row, a `"` at the start of a field opens a quoted field in which `""` is a quote and commas and
 * line breaks are data. A cell's size is its bytes as sent, its quotes included. Input that
 * csv-parse will refuse anyway (a quote inside an unquoted field, text after a closing quote) is
 * only counted here; the parser names the error.
 */
import { GatewayError } from "../errors.ts";

const COMMA = 44;
const QUOTE = 34;
const CR = 13;
const LF = 10;

/** The 1-based line of byte `pos` (CRLF, LF and a lone CR each end a line); only for errors. */
function lineAt(bytes: Uint8Array, pos: number): number {
  let line = 1;
  for (let i = 0; i < pos; i++) {
    const c = bytes[i];
    if (c === LF || (c === CR && bytes[i + 1] !== LF)) line++;
  }
  return line;
}

/** Checks fields per row and bytes per cell of one CSV body, in document order. */
export class CsvLimitScanner {
  #pos = 0;
  /** Inside a quoted field. */
  #quoted = false;
  /** Inside a quoted field, the byte before was a `"`: a closing quote or the first of `""`. */
  #quoteSeen = false;
  #cellBytes = 0;
  #fields = 1;

  /** A scanner of `bytes` (UTF-8) against the two limits. */
  constructor(
    readonly bytes: Uint8Array,
    readonly maxColumns: number,
    readonly maxCellBytes: number,
  ) {}

  /**
   * Scan from where the last call stopped up to `end` (exclusive). Throws 413
   * `too_many_csv_columns` or `csv_cell_too_large` at the first row or cell over its limit.
   */
  scanTo(end: number): void {
    const bytes = this.bytes;
    const maxCell = this.maxCellBytes;
    let i = this.#pos;
    let cell = this.#cellBytes;
    try {
      while (i < end) {
        if (this.#quoted) {
          if (!this.#quoteSeen) {
            // Jump to the next quote: everything before it is data of this cell. The search stops
            // at `end`: one reaching past it would be repeated for every chunk of a long cell.
            const found = bytes.subarray(i, end).indexOf(QUOTE);
            const q = found < 0 ? end : i + found;
            cell += q - i;
            i = q;
            if (cell > maxCell) return this.#cellTooLarge(i - (cell - maxCell));
            if (i === end) break;
            this.#quoteSeen = true;
            cell++;
            i++;
            if (cell > maxCell) return this.#cellTooLarge(i - 1);
            continue;
          }
          this.#quoteSeen = false;
          if (bytes[i] === QUOTE) {
            // `""`: a quote in the data; the field stays quoted.
            cell++;
            i++;
            if (cell > maxCell) return this.#cellTooLarge(i - 1);
            continue;
          }
          // The quote before closed the field; this byte is read as unquoted below.
          this.#quoted = false;
        }
        const c = bytes[i];
        if (c === COMMA) {
          cell = 0;
          if (++this.#fields > this.maxColumns) {
            throw new GatewayError(
              413,
              "too_many_csv_columns",
              `CSV row on line ${
                lineAt(bytes, i)
              } has more than max_csv_columns of ${this.maxColumns} fields`,
            );
          }
        } else if (c === LF || c === CR) {
          cell = 0;
          this.#fields = 1;
        } else {
          if (c === QUOTE && cell === 0) this.#quoted = true;
          if (++cell > maxCell) return this.#cellTooLarge(i);
        }
        i++;
      }
    } finally {
      this.#pos = i;
      this.#cellBytes = cell;
    }
  }

  /** Throws the 413 for a cell that passes the limit at byte `pos`. */
  #cellTooLarge(pos: number): never {
    throw new GatewayError(
      413,
      "csv_cell_too_large",
      `CSV cell on line ${
        lineAt(this.bytes, pos)
      } is larger than max_csv_cell_bytes of ${this.maxCellBytes} bytes`,
    );
  }
}

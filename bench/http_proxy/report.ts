/** Pure helpers of the HTTP proxy benchmark: the fixed body, rates, and the printed tables. */

/** A JSON document of exactly `bytes` bytes (ASCII only, no `'`, `$` or `\`, safe inside nginx `return`). */
export function fixedJsonBody(bytes: number): string {
  const head = '{"resourceType":"Bundle","type":"searchset","filler":"';
  const tail = '"}';
  const room = bytes - head.length - tail.length;
  if (room < 0) throw new Error(`a JSON body needs at least ${head.length + tail.length} bytes`);
  const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789";
  let filler = "";
  for (let i = 0; i < room; i++) filler += alphabet[i % alphabet.length];
  return head + filler + tail;
}

/** A pipe table (GitHub markdown, readable in a terminal too) with right-aligned number columns. */
export function markdownTable(headers: string[], rows: string[][]): string {
  const widths = headers.map((header, i) =>
    Math.max(header.length, ...rows.map((row) => (row[i] ?? "").length))
  );
  const line = (cells: string[]) =>
    `| ${
      cells.map((cell, i) => i === 0 ? cell.padEnd(widths[i]) : cell.padStart(widths[i])).join(
        " | ",
      )
    } |`;
  const rule = `|${
    widths.map((w, i) => i === 0 ? "-".repeat(w + 2) : `${"-".repeat(w + 1)}:`).join("|")
  }|`;
  return [line(headers), rule, ...rows.map(line)].join("\n");
}

/** Formats a number with `digits` decimals. */
export function fixed(value: number, digits = 2): string {
  return Number.isFinite(value) ? value.toFixed(digits) : "n/a";
}

/** `PASS` when `value` meets the target (`>=`, `<` or `<=` `target`), else `MISS`. */
export function verdict(value: number, op: ">=" | "<" | "<=", target: number): string {
  const ok = op === ">=" ? value >= target : op === "<" ? value < target : value <= target;
  return ok ? "PASS" : "MISS";
}

/** The median of `values` (the mean of the middle two for an even count). */
export function median(values: number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}

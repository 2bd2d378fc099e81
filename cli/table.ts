/** Tables for humans, drawn with cli-table3. */
import Table from "cli-table3";

/** Options of the tables. */
export interface TableOptions {
  /** Bold headers and grey borders (terminals only). */
  color?: boolean;
}

/** Border characters without lines between rows (name/value tables). */
const NO_ROW_LINES = { "mid": "", "left-mid": "", "mid-mid": "", "right-mid": "" };

function style(color: boolean | undefined) {
  return color ? { head: ["bold"], border: ["grey"] } : { head: [], border: [] };
}

/** A table with a header row. */
export function renderTable(
  head: string[],
  rows: (string | number)[][],
  options: TableOptions = {},
): string {
  const table = new Table({ head, style: style(options.color) });
  for (const row of rows) table.push(row.map((cell) => String(cell)));
  return table.toString();
}

/** A two-column table of names and values. */
export function renderKeyValues(
  pairs: [string, string | number][],
  options: TableOptions = {},
): string {
  const table = new Table({ style: style(options.color), chars: NO_ROW_LINES });
  for (const [key, value] of pairs) table.push({ [key]: String(value) });
  return table.toString();
}

/** Borderless aligned columns (command lists). */
export function renderColumns(rows: string[][]): string {
  const table = new Table({
    chars: {
      "top": "",
      "top-mid": "",
      "top-left": "",
      "top-right": "",
      "bottom": "",
      "bottom-mid": "",
      "bottom-left": "",
      "bottom-right": "",
      "left": "",
      "left-mid": "",
      "mid": "",
      "mid-mid": "",
      "right": "",
      "right-mid": "",
      "middle": "  ",
    },
    style: { head: [], border: [], "padding-left": 0, "padding-right": 0 },
  });
  for (const row of rows) table.push(row);
  return table.toString().split("\n").map((line) => line.trimEnd()).join("\n");
}

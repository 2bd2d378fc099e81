/** TOML text -> raw table plus the position of every key, with syntax errors as ConfigProblems. */
import { parse, TomlError } from "smol-toml";
import { scanToml } from "./scan.ts";
import type { ConfigProblem } from "./types.ts";

/** Where a key was written. */
export interface KeyPosition {
  file: string;
  /** 1-based line. */
  line: number;
}

/** Dotted key path (array items as `key[0]`) -> where it was written. */
export type KeyPositions = Map<string, KeyPosition>;

/** The outcome of parsing one file. */
export interface ParsedConfigText {
  /** The parsed document; undefined when the text is not valid TOML. */
  raw?: Record<string, unknown>;
  positions: KeyPositions;
  problems: ConfigProblem[];
}

/** Parses TOML `text` read from `fileName`; never throws. */
export function parseConfigText(text: string, fileName: string): ParsedConfigText {
  const scan = scanToml(text);
  const positions: KeyPositions = new Map();
  for (const [path, line] of scan.keys) positions.set(path, { file: fileName, line });
  try {
    return { raw: parse(text) as Record<string, unknown>, positions, problems: [] };
  } catch (err) {
    const redefined = err instanceof TomlError && /redefine/.test(err.message);
    if (!redefined || scan.duplicates.length === 0) {
      return { positions, problems: [syntaxProblem(err, fileName)] };
    }
    // A key or table defined twice: say which, with both lines, and go on with the first
    // definition so that the file's other problems are reported too.
    const problems: ConfigProblem[] = scan.duplicates.map((d) => ({
      file: fileName,
      line: d.line,
      path: d.path,
      message:
        `\`${d.path}\` is defined twice: on line ${d.firstLine} and on line ${d.line}; keep one`,
    }));
    const lines = text.split("\n");
    // Only a repeated one-line `key = value` can be dropped safely; a repeated [table] cannot.
    if (scan.duplicates.some((d) => lines[d.line - 1].trimStart().startsWith("["))) {
      return { positions, problems };
    }
    for (const d of scan.duplicates) lines[d.line - 1] = "";
    try {
      return { raw: parse(lines.join("\n")) as Record<string, unknown>, positions, problems };
    } catch {
      return { positions, problems };
    }
  }
}

/** The key-position index of `text`, every entry naming `fileName`. */
export function keyPositions(text: string, fileName: string): KeyPositions {
  const positions: KeyPositions = new Map();
  for (const [path, line] of scanToml(text).keys) positions.set(path, { file: fileName, line });
  return positions;
}

function syntaxProblem(err: unknown, file: string): ConfigProblem {
  if (err instanceof TomlError) {
    // smol-toml's message repeats a code block after the first line; keep the first line only.
    const first = err.message.split("\n")[0].replace(/^Invalid TOML document:\s*/, "");
    return {
      file,
      line: err.line,
      path: "",
      message: `TOML syntax error at column ${err.column}: ${first}`,
    };
  }
  return { file, path: "", message: `TOML syntax error: ${(err as Error).message}` };
}

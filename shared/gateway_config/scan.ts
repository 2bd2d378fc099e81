/**
 * A small, forgiving TOML scanner that finds where things are, not what they mean: the line of
 * every key path and the spans of string values. smol-toml gives values without positions, so
 * validation messages and `${VAR}` substitution rely on this. It never throws; on text it does not
 * understand it skips to the next line (the real parser reports the syntax error).
 */

/** Kinds of TOML strings. */
export type StringKind = "basic" | "literal" | "ml_basic" | "ml_literal";

/** A string value in the text: `start`/`end` delimit its content, without quotes. */
export interface StringSpan {
  kind: StringKind;
  /** Key path of the value (array items as `key[0]`). */
  path: string;
  start: number;
  end: number;
}

/** What the scanner found. */
export interface TomlScan {
  /** Dotted key path (array items as `key[0]`) -> 1-based line of its first definition. */
  keys: Map<string, number>;
  /** String values (not keys), in text order. */
  strings: StringSpan[];
  /** Keys (`a.b = …`) and tables (`[a]`) defined a second time: where, and where first. */
  duplicates: { path: string; line: number; firstLine: number }[];
}

const BARE_KEY = /[A-Za-z0-9_-]/;

/** Scans `text` for key positions and string value spans. */
export function scanToml(text: string): TomlScan {
  return new Scanner(text).run();
}

/** Joins key segments the way problem paths are written. */
export function joinPath(base: string, key: string): string {
  return base === "" ? key : `${base}.${key}`;
}

class Scanner {
  #s: string;
  #p = 0;
  #line = 1;
  #keys = new Map<string, number>();
  #strings: StringSpan[] = [];
  /** Paths defined by a `key = value` or a `[table]` header (not by a prefix of one). */
  #defined = new Map<string, number>();
  #duplicates: TomlScan["duplicates"] = [];

  constructor(text: string) {
    this.#s = text;
  }

  run(): TomlScan {
    let table = "";
    while (this.#skip(true)) {
      const start = this.#p;
      try {
        if (this.#peek() === "[") table = this.#header();
        else this.#keyValue(table);
      } catch {
        // Unparseable statement: resume on the next line.
      }
      if (this.#p === start) this.#p++;
      this.#toLineEnd();
    }
    return { keys: this.#keys, strings: this.#strings, duplicates: this.#duplicates };
  }

  #peek(offset = 0): string {
    return this.#s[this.#p + offset] ?? "";
  }

  #startsWith(token: string): boolean {
    return this.#s.startsWith(token, this.#p);
  }

  /** Skips blanks and comments (and newlines when allowed); false at end of text. */
  #skip(newlines: boolean): boolean {
    while (this.#p < this.#s.length) {
      const c = this.#s[this.#p];
      if (c === " " || c === "\t" || c === "\r") this.#p++;
      else if (c === "#") {
        while (this.#p < this.#s.length && this.#s[this.#p] !== "\n") this.#p++;
      } else if (c === "\n" && newlines) {
        this.#line++;
        this.#p++;
      } else return true;
    }
    return false;
  }

  /** Moves past the end of the current line, ignoring whatever is left on it. */
  #toLineEnd(): void {
    while (this.#p < this.#s.length && this.#s[this.#p] !== "\n") this.#p++;
  }

  #record(path: string[], line: number): void {
    for (let i = 1; i <= path.length; i++) {
      const key = path.slice(0, i).join(".");
      if (!this.#keys.has(key)) this.#keys.set(key, line);
    }
  }

  /** Notes that `path` is defined here; a second definition is a duplicate. */
  #define(path: string, line: number): void {
    const first = this.#defined.get(path);
    if (first === undefined) this.#defined.set(path, line);
    else this.#duplicates.push({ path, line, firstLine: first });
  }

  #recordExact(path: string, line: number): void {
    if (!this.#keys.has(path)) this.#keys.set(path, line);
  }

  /** `[a.b]` or `[[a.b]]`; returns the table path. */
  #header(): string {
    const double = this.#startsWith("[[");
    this.#p += double ? 2 : 1;
    const key = this.#key();
    this.#skip(false);
    if (!this.#startsWith(double ? "]]" : "]")) throw new Error("header");
    this.#p += double ? 2 : 1;
    this.#record(key, this.#line);
    if (!double) this.#define(key.join("."), this.#line);
    return key.join(".");
  }

  #keyValue(table: string): void {
    const line = this.#line;
    const key = this.#key();
    this.#skip(false);
    if (this.#peek() !== "=") throw new Error("=");
    this.#p++;
    const base = table === "" ? [] : table.split(".");
    this.#record([...base, ...key], line);
    this.#define([...base, ...key].join("."), line);
    this.#value(joinPath(table, key.join(".")));
  }

  /** A dotted key: bare and quoted segments. */
  #key(): string[] {
    const parts: string[] = [];
    for (;;) {
      this.#skip(false);
      const c = this.#peek();
      if (c === '"' || c === "'") {
        const span = this.#string(false);
        parts.push(this.#s.slice(span.start, span.end));
      } else {
        const start = this.#p;
        while (BARE_KEY.test(this.#peek())) this.#p++;
        if (this.#p === start) throw new Error("key");
        parts.push(this.#s.slice(start, this.#p));
      }
      this.#skip(false);
      if (this.#peek() !== ".") return parts;
      this.#p++;
    }
  }

  #value(path: string): void {
    this.#skip(false);
    const c = this.#peek();
    if (c === '"' || c === "'") this.#strings.push({ ...this.#string(true), path });
    else if (c === "[") this.#array(path);
    else if (c === "{") this.#inlineTable(path);
    else {
      while (this.#p < this.#s.length && !",]}#\n".includes(this.#s[this.#p])) this.#p++;
    }
  }

  #array(path: string): void {
    this.#p++;
    for (let i = 0;; i++) {
      this.#skip(true);
      if (this.#peek() === "]" || this.#p >= this.#s.length) break;
      const item = `${path}[${i}]`;
      this.#recordExact(item, this.#line);
      this.#value(item);
      this.#skip(true);
      if (this.#peek() !== ",") break;
      this.#p++;
    }
    if (this.#peek() !== "]") throw new Error("]");
    this.#p++;
  }

  #inlineTable(path: string): void {
    this.#p++;
    for (;;) {
      this.#skip(true);
      if (this.#peek() === "}" || this.#p >= this.#s.length) break;
      const line = this.#line;
      const key = this.#key();
      this.#skip(false);
      if (this.#peek() !== "=") throw new Error("=");
      this.#p++;
      this.#record([...path.split("."), ...key], line);
      this.#value(joinPath(path, key.join(".")));
      this.#skip(true);
      if (this.#peek() !== ",") break;
      this.#p++;
    }
    if (this.#peek() !== "}") throw new Error("}");
    this.#p++;
  }

  /** A string of any kind starting at the cursor; counts the newlines it spans. */
  #string(multiline: boolean): Omit<StringSpan, "path"> {
    const quote = this.#peek();
    const triple = multiline && this.#startsWith(quote.repeat(3));
    const kind: StringKind = quote === '"'
      ? (triple ? "ml_basic" : "basic")
      : (triple ? "ml_literal" : "literal");
    const delimiter = triple ? quote.repeat(3) : quote;
    this.#p += delimiter.length;
    const start = this.#p;
    while (this.#p < this.#s.length) {
      const c = this.#s[this.#p];
      if (c === "\\" && quote === '"') {
        if (this.#s[this.#p + 1] === "\n") this.#line++;
        this.#p += 2;
        continue;
      }
      if (c === "\n") {
        if (!triple) throw new Error("newline in string");
        this.#line++;
      }
      if (this.#startsWith(delimiter)) {
        // Up to two quotes may sit right before a closing triple delimiter (`""""` ends in `"`).
        let end = this.#p;
        while (triple && this.#s[end + 3] === quote && end - this.#p < 2) end++;
        this.#p = end + delimiter.length;
        return { kind, start, end };
      }
      this.#p++;
    }
    throw new Error("unterminated string");
  }
}

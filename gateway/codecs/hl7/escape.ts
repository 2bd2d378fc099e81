/**
 * HL7 v2 escape sequences (v2.5 chapter 2.7): `\F\ \S\ \T\ \R\ \E\` (and `\P\`, v2.7's truncation
 * character) stand for the delimiters, `\Xhh..\` for bytes in hex, and `\.br\`, `\H\`, `\N\`,
 * `\Cxxyy\`, `\Mxxyyzz\`, `\Zxx\` are formatting or character-set commands. Every function here is
 * one pass over its input, and sequences are paired left to right (an escape character opens one,
 * the next closes it), as a receiver reads them.
 */
import type { Hl7Delimiters } from "./delimiters.ts";

const UTF8_FATAL = new TextDecoder("utf-8", { fatal: true });
const LATIN1 = new TextDecoder("latin1");

/** The character an escape sequence's body stands for, for the delimiter escapes. */
function delimiterOf(body: string, d: Hl7Delimiters, withEscape: boolean): string | undefined {
  switch (body) {
    case "F":
      return d.field;
    case "S":
      return d.component;
    case "T":
      return d.subcomponent;
    case "R":
      return d.repetition;
    case "E":
      return withEscape ? d.escape : undefined;
    case "P":
      return withEscape && d.truncation !== "" ? d.truncation : undefined;
  }
  return undefined;
}

/** The text of a `\Xhh..\` body's bytes: UTF-8 when they are valid UTF-8, else ISO 8859-1. */
function hexText(hex: string): string | undefined {
  if (hex.length === 0 || hex.length % 2 !== 0 || !/^[0-9A-Fa-f]+$/.test(hex)) return undefined;
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = parseInt(hex.slice(2 * i, 2 * i + 2), 16);
  try {
    return UTF8_FATAL.decode(bytes);
  } catch {
    return LATIN1.decode(bytes);
  }
}

/**
 * Decode the escape sequences of `text` into plain text: the delimiter escapes and `\E\` become
 * their characters, `\Xhh..\` its bytes (UTF-8, else ISO 8859-1); formatting and character-set
 * commands (`\.br\`, `\H\`, `\C2842\`…), unknown sequences and an unclosed escape character are
 * kept verbatim.
 */
export function unescapeHl7(text: string, d: Hl7Delimiters): string {
  return decode(text, d, true);
}

/**
 * The JSON form of one leaf (a component or sub-component as written): only `\F\ \S\ \T\ \R\` are
 * decoded (their characters cannot occur raw in a leaf, so writing them back restores the same
 * bytes); every other sequence, `\E\` included, is kept verbatim, so the escape character in a leaf
 * always opens a sequence.
 */
export function decodeLeaf(text: string, d: Hl7Delimiters): string {
  if (d.escape === "" || !text.includes(d.escape)) return text;
  return decode(text, d, false);
}

/** One pass over `text` pairing escape characters; `full` decodes `\E\ \P\ \X..\` too. */
function decode(text: string, d: Hl7Delimiters, full: boolean): string {
  const esc = d.escape;
  let out = "";
  let from = 0;
  let i = text.indexOf(esc);
  while (i >= 0) {
    const close = text.indexOf(esc, i + 1);
    if (close < 0) break;
    const body = text.slice(i + 1, close);
    let value = delimiterOf(body, d, full);
    if (value === undefined && full && (body[0] === "X" || body[0] === "x")) {
      value = hexText(body.slice(1));
    }
    if (value !== undefined) {
      out += text.slice(from, i) + value;
      from = close + 1;
    }
    i = text.indexOf(esc, close + 1);
  }
  return from === 0 ? text : out + text.slice(from);
}

/** The escape of a character that cannot be written raw in a leaf, or undefined. */
function leafEscape(c: string, d: Hl7Delimiters): string | undefined {
  const e = d.escape;
  if (c === d.field) return `${e}F${e}`;
  if (c === d.component) return `${e}S${e}`;
  if (c === d.subcomponent) return `${e}T${e}`;
  if (c === d.repetition) return `${e}R${e}`;
  if (c === "\r") return `${e}X0D${e}`;
  if (c === "\n") return `${e}X0A${e}`;
  return undefined;
}

/**
 * The ER7 form of a JSON leaf (the inverse of decodeLeaf): the four delimiters become
 * `\F\ \S\ \T\ \R\`, CR and LF `\X0D\` and `\X0A\`; the escape character is written as is (it opens
 * a sequence kept verbatim; a literal one is written `\E\` in the JSON).
 */
export function encodeLeaf(text: string, d: Hl7Delimiters): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (
      c === d.field || c === d.component || c === d.subcomponent || c === d.repetition ||
      c === "\r" || c === "\n"
    ) {
      out += text.slice(from, i) + leafEscape(c, d);
      from = i + 1;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * Escape plain text for a field of a message with these delimiters: the escape character becomes
 * `\E\`, the delimiters `\F\ \S\ \T\ \R\` (and `\P\` for v2.7's truncation character), CR and LF
 * `\X0D\` and `\X0A\`. `unescapeHl7` reads it back.
 */
export function escapeHl7(text: string, d: Hl7Delimiters): string {
  let out = "";
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    let rep = leafEscape(c, d);
    if (rep === undefined && c === d.escape) rep = `${d.escape}E${d.escape}`;
    if (rep === undefined && d.truncation !== "" && c === d.truncation) {
      rep = `${d.escape}P${d.escape}`;
    }
    if (rep !== undefined) {
      out += text.slice(from, i) + rep;
      from = i + 1;
    }
  }
  return from === 0 ? text : out + text.slice(from);
}

/**
 * Writing a shift's output as JSON: the output holds values the shift program made and numbers
 * that are positions of leaves or containers in the input's tape (raw_json.ts), which are copied
 * as the input spelled them.
 */

import { type JsonWriter, Kind, type RawDoc } from "./raw_json.ts";

/**
 * Writes a shift output (values, and numbers that are positions in `doc`) as JSON.stringify would.
 * The common cases (leaves copied from the input, plain ASCII keys) write into the writer's
 * buffer here rather than through its methods: this runs once per output value.
 */
export function writeOutput(w: JsonWriter, v: unknown, doc: RawDoc): void {
  if (typeof v === "number") {
    const t = doc.tape;
    const o = v * 4; // the tape's record size
    const kind = t[o];
    if (kind !== Kind.String && kind !== Kind.Int) return doc.write(w, v);
    // A string with its quotes, or a number as spelled.
    const start = kind === Kind.String ? t[o + 1] - 1 : t[o + 1];
    const end = kind === Kind.String ? t[o + 2] + 1 : t[o + 2];
    const buf = w.room(end - start);
    let at = w.len;
    const src = doc.bytes;
    if (end - start < 64) {
      for (let i = start; i < end; i++) buf[at++] = src[i];
    } else {
      buf.set(src.subarray(start, end), at);
      at += end - start;
    }
    w.len = at;
    return;
  }
  if (v === null) return w.ascii("null");
  if (typeof v === "object") {
    if (Array.isArray(v)) {
      w.byte(0x5b);
      for (let i = 0; i < v.length; i++) {
        if (i > 0) w.byte(0x2c);
        writeOutput(w, v[i], doc);
      }
      return w.byte(0x5d);
    }
    w.byte(0x7b);
    let first = true;
    const map = v as Record<string, unknown>;
    for (const key of Object.keys(map)) {
      const item = map[key];
      // As JSON.stringify: members without a JSON form are left out.
      if (item === undefined || typeof item === "function" || typeof item === "symbol") continue;
      // `,"key":` straight into the buffer when the key is plain ASCII.
      const buf = w.room(key.length + 4);
      let at = w.len;
      if (!first) buf[at++] = 0x2c;
      first = false;
      const keyAt = at;
      buf[at++] = 0x22;
      let plain = true;
      for (let i = 0; i < key.length; i++) {
        const c = key.charCodeAt(i);
        if (c < 0x20 || c === 0x22 || c === 0x5c || c > 0x7e) {
          plain = false;
          break;
        }
        buf[at++] = c;
      }
      if (plain) {
        buf[at++] = 0x22;
        buf[at++] = 0x3a;
        w.len = at;
      } else {
        w.len = keyAt;
        w.quoted(key);
        w.byte(0x3a);
      }
      writeOutput(w, item, doc);
    }
    return w.byte(0x7d);
  }
  switch (typeof v) {
    case "string":
      return w.quoted(v);
    case "boolean":
      return w.ascii(v ? "true" : "false");
    default:
      return w.ascii("null");
  }
}

/**
 * Pretty text of a stage's body for the message page: JSON indented, XML indented (through
 * fast-xml-parser, entities not expanded), anything else as it is. Bounded: a body larger than
 * {@link MAX_PRETTY_BYTES} is shown as it is, and any failure falls back to the text as received.
 */
import { XMLBuilder, XMLParser } from "fast-xml-parser";

/** Largest body that is re-indented (characters). */
export const MAX_PRETTY_BYTES = 512 * 1024;

/** JSON with two-space indentation, or the text as it is when it is not JSON. */
export function prettyJson(text: string): string {
  if (text.length > MAX_PRETTY_BYTES) return text;
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

/** XML re-indented, or the text as it is when it cannot be parsed. */
export function prettyXml(text: string): string {
  if (text.length > MAX_PRETTY_BYTES) return text;
  try {
    const options = {
      preserveOrder: true,
      ignoreAttributes: false,
      processEntities: false,
      htmlEntities: false,
      commentPropName: "#comment",
      cdataPropName: "#cdata",
      trimValues: true,
    };
    const tree = new XMLParser(options).parse(text);
    const out = new XMLBuilder({ ...options, format: true, indentBy: "  " }).build(tree) as string;
    return out.trim() || text;
  } catch {
    return text;
  }
}

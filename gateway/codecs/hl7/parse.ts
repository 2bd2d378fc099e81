/** ER7 text to the codec's JSON (json.ts): one pass over the text, every count capped. */
import { Hl7Error } from "./error.ts";
import { type Hl7Delimiters, readDelimiters } from "./delimiters.ts";
import { decodeLeaf } from "./escape.ts";
import { DEFAULT_HL7_LIMITS, type Hl7Limits } from "./limits.ts";
import { isHeaderSegment, splitSegments, textStart } from "./segments.ts";
import type {
  Hl7Batch,
  Hl7BatchGroup,
  Hl7Json,
  Hl7Leaf,
  Hl7Message,
  Hl7Repetition,
  Hl7Segment,
} from "./json.ts";

/** A segment name: a capital letter and two capitals or digits. */
const SEGMENT_NAME = /^[A-Z][A-Z0-9]{2}$/;

/** A leaf's JSON: HL7's null `""` is null, otherwise the text with the delimiter escapes decoded. */
function leaf(raw: string, d: Hl7Delimiters): Hl7Leaf {
  return raw === '""' ? null : decodeLeaf(raw, d);
}

/** Where a count went past its limit. */
interface Place {
  segment: string;
  field: number;
}

/** One repetition's components and sub-components. */
function parseRepetition(
  text: string,
  d: Hl7Delimiters,
  limits: Hl7Limits,
  at: Place,
): Hl7Repetition {
  const rep: Hl7Repetition = {};
  if (text === "") return rep;
  const comps = text.split(d.component);
  const tooMany = () =>
    new Hl7Error(
      "too_many_components",
      `${at.segment}-${at.field} has more than ${limits.maxComponents} components or sub-components`,
      at,
    );
  if (comps.length > limits.maxComponents) throw tooMany();
  for (let c = 0; c < comps.length; c++) {
    const comp = comps[c];
    if (comp === "") continue;
    const n = c + 1;
    if (!comp.includes(d.subcomponent)) {
      rep[n] = leaf(comp, d);
      continue;
    }
    const subs = comp.split(d.subcomponent);
    if (subs.length > limits.maxComponents) throw tooMany();
    for (let s = 0; s < subs.length; s++) {
      if (subs[s] !== "") rep[s === 0 ? `${n}` : `${n}.${s + 1}`] = leaf(subs[s], d);
    }
    if (subs[subs.length - 1] === "") rep[`${n}.#`] = subs.length;
  }
  if (comps.length > 1 && comps[comps.length - 1] === "") rep["#"] = comps.length;
  return rep;
}

/** One segment's fields (`parts` split at the field separator; index 0 is the name). */
function parseSegment(
  name: string,
  parts: string[],
  d: Hl7Delimiters,
  limits: Hl7Limits,
): Hl7Segment {
  const seg: Hl7Segment = {};
  const header = isHeaderSegment(name);
  // In MSH (FHS, BHS) parts[1] is MSH-2: the field separator itself is MSH-1.
  const shift = header ? 1 : 0;
  const count = parts.length - 1 + shift;
  if (count > limits.maxFieldsPerSegment) {
    throw new Hl7Error(
      "too_many_fields",
      `${name} has more than ${limits.maxFieldsPerSegment} fields`,
      { segment: name },
    );
  }
  if (header) {
    seg["1"] = [{ "1": d.field }];
    seg["2"] = [{ "1": d.encoding }];
  }
  for (let i = header ? 2 : 1; i < parts.length; i++) {
    const text = parts[i];
    if (text === "") continue;
    const field = i + shift;
    const reps = text.split(d.repetition);
    if (reps.length > limits.maxRepetitions) {
      throw new Hl7Error(
        "too_many_repetitions",
        `${name}-${field} has more than ${limits.maxRepetitions} repetitions`,
        { segment: name, field },
      );
    }
    seg[field] = reps.map((r) => parseRepetition(r, d, limits, { segment: name, field }));
  }
  if (parts.length > (header ? 2 : 1) && parts[parts.length - 1] === "") seg["#"] = count;
  return seg;
}

/** A segment line's name and fields, checked. */
function splitLine(line: string, d: Hl7Delimiters, first: Hl7Delimiters | undefined): {
  name: string;
  parts: string[];
} {
  const end = line.indexOf(d.field);
  let name = end < 0 ? line : line.slice(0, end);
  if (name.length > 3 && isHeaderSegment(name.slice(0, 3))) name = name.slice(0, 3);
  if (!SEGMENT_NAME.test(name)) {
    throw new Hl7Error(
      "bad_segment",
      `${JSON.stringify(name.slice(0, 16))} is not a segment name (three capitals or digits)`,
      { segment: name.slice(0, 16) },
    );
  }
  if (isHeaderSegment(name) && first !== undefined) {
    if (line.charAt(3) !== d.field || !line.startsWith(d.encoding, 4)) {
      throw new Hl7Error("bad_delimiters", `${name} changes the delimiters of the text`, {
        segment: name,
        field: 2,
      });
    }
  }
  const parts = line.split(d.field);
  if (isHeaderSegment(name)) {
    // MSH-2 is read as a whole: rejoin when it was cut (it cannot hold the field separator).
    if (parts[1] !== d.encoding) {
      throw new Hl7Error("bad_delimiters", `${name}-2 differs from the text's delimiters`, {
        segment: name,
        field: 2,
      });
    }
  }
  return { name, parts };
}

/**
 * Parse an ER7 text into the codec's JSON: a message, or a batch when the text starts with FHS or
 * BHS or holds more than one MSH. Delimiters come from the first header segment (MSH-1/MSH-2);
 * segments end at CR, LF or CRLF (the first one found is kept as `terminator`); a byte order mark
 * and blank space before the first segment and blank lines are skipped.
 */
export function parseHl7(text: string, limits: Hl7Limits = DEFAULT_HL7_LIMITS): Hl7Json {
  if (text.length > limits.maxBytes) {
    throw new Hl7Error("too_large", `the text is longer than ${limits.maxBytes} characters`);
  }
  const start = textStart(text);
  const head = text.slice(start, start + 3);
  if (!isHeaderSegment(head)) {
    throw new Hl7Error("no_msh", "the text does not start with an MSH, FHS or BHS segment", {
      segment: "MSH",
    });
  }
  const d = readDelimiters(text, start, head);
  const { lines, terminator, terminated } = splitSegments(text, start, limits.maxSegments);
  const messages: Hl7Message[] = [];
  const batch: Hl7Batch = { batches: [], terminator };
  let group: Hl7BatchGroup | undefined;
  let message: Hl7Message | undefined;
  let ended = false; // FTS seen
  const out = (name: string, why: string) =>
    new Hl7Error("bad_batch", `${name} ${why}`, { segment: name });
  for (let i = 0; i < lines.length; i++) {
    const { name, parts } = splitLine(lines[i], d, i === 0 ? undefined : d);
    if (ended) throw out(name, "comes after FTS");
    const seg = parseSegment(name, parts, d, limits);
    switch (name) {
      case "FHS":
        if (i !== 0) throw out(name, "is not the first segment");
        batch.FHS = seg;
        break;
      case "BHS":
        group = { BHS: seg, messages: [] };
        batch.batches.push(group);
        message = undefined;
        break;
      case "BTS":
        if (group === undefined || group.BTS !== undefined) throw out(name, "has no batch to end");
        group.BTS = seg;
        message = undefined;
        break;
      case "FTS":
        if (batch.FHS === undefined) throw out(name, "ends a file that has no FHS");
        batch.FTS = seg;
        ended = true;
        message = undefined;
        break;
      case "MSH":
        message = { segments: { MSH: [seg] }, order: ["MSH"] };
        messages.push(message);
        if (group === undefined || group.BTS !== undefined) {
          group = { messages: [] };
          batch.batches.push(group);
        }
        group.messages.push(message);
        break;
      default: {
        if (message === undefined) throw out(name, "is outside a message (no MSH before it)");
        const list = message.segments[name];
        if (list === undefined) message.segments[name] = [seg];
        else list.push(seg);
        message.order.push(name);
      }
    }
  }
  const single = batch.FHS === undefined && batch.batches.length === 1 &&
    batch.batches[0].BHS === undefined && batch.batches[0].BTS === undefined &&
    messages.length === 1;
  const result: Hl7Json = single ? messages[0] : batch;
  result.terminator = terminator;
  if (!terminated) result.unterminated = true;
  return result;
}

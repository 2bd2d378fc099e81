/**
 * The JSON shape of an ER7 text (docs/hl7.md, "The message as JSON", is the reference):
 *
 * - A message: `{ segments: { NAME: [occurrence, …] }, order: [NAME, …], terminator }`. `order`
 *   lists the segment names as they came (the i-th `PID` in `order` is `segments.PID[i]`).
 * - An occurrence: fields by HL7 number, `"1"`…`"n"`; a field is always an array of repetitions;
 *   a repetition is always an object of components `"1"`…`"n"`; a component is a string (its first
 *   sub-component) and its further sub-components sit beside it as `"n.2"`, `"n.3"`…. So a spec
 *   reading `PID-5.1` reads `segments.PID[0]["5"][0]["1"]` whether or not the field repeats or the
 *   component has sub-components.
 * - Empty positions are left out; `"#"` (an occurrence's field count, a repetition's component
 *   count) and `"n.#"` (component n's sub-component count) record trailing empty ones, only when
 *   there are some. HL7's null `""` is JSON `null`.
 * - A leaf is its text with `\F\ \S\ \T\ \R\` decoded; other escape sequences (`\E\`, `\X..\`,
 *   `\.br\`…) stay as written.
 * - MSH-1 and MSH-2 (FHS and BHS alike) hold the field separator and the encoding characters.
 * - A batch: `{ FHS?, batches: [{ BHS?, messages: [message…], BTS? }], FTS?, terminator }`, its
 *   messages without `terminator`.
 */

/** A leaf: a component's or sub-component's text (`null` is HL7's `""`). */
export type Hl7Leaf = string | null;

/** A repetition: components by number, `"n.m"` sub-components, `"#"`/`"n.#"` counts. */
export type Hl7Repetition = Record<string, Hl7Leaf | number>;

/** A segment occurrence: fields by number (arrays of repetitions) and `"#"`, the field count. */
export type Hl7Segment = Record<string, Hl7Repetition[] | number>;

/** How segments end: `\r` (HL7's), or `\n`/`\r\n` as found on input. */
export type Hl7Terminator = "\r" | "\n" | "\r\n";

/** One message: its segments by name and their order. */
export interface Hl7Message {
  /** Occurrences of each segment, by name, in the order they came. */
  segments: Record<string, Hl7Segment[]>;
  /** The segments' names in message order. */
  order: string[];
  /** The segment terminator (top-level only). */
  terminator?: Hl7Terminator;
  /** True when the last segment had no terminator (top-level only; left out when false). */
  unterminated?: true;
}

/** One batch of a batch file: BHS, its messages, BTS. */
export interface Hl7BatchGroup {
  /** The batch header, when there is one. */
  BHS?: Hl7Segment;
  /** The messages of the batch. */
  messages: Hl7Message[];
  /** The batch trailer, when there is one. */
  BTS?: Hl7Segment;
}

/** A batch file: FHS, batches, FTS (each header and trailer optional). */
export interface Hl7Batch {
  /** The file header. */
  FHS?: Hl7Segment;
  /** The batches. */
  batches: Hl7BatchGroup[];
  /** The file trailer. */
  FTS?: Hl7Segment;
  /** The segment terminator. */
  terminator: Hl7Terminator;
  /** True when the last segment had no terminator (left out when false). */
  unterminated?: true;
}

/** What parseHl7 gives and formatHl7 takes. */
export type Hl7Json = Hl7Message | Hl7Batch;

/** True for a batch (it has `batches`), false for a message. */
export function isHl7Batch(json: Hl7Json): json is Hl7Batch {
  return Array.isArray((json as Hl7Batch).batches);
}

/**
 * HL7 v2 batches over MLLP (v2.5 section 2.10.3, "Acknowledging batches"): a batch received as one
 * frame is split into its messages (each goes through the pipeline on its own), and answered with
 * one response batch listing every message's acknowledgements in order. The response mirrors the
 * received structure: an FHS/FTS when the batch had an FHS, and a BHS/BTS for each of its batches
 * (also for one that had none). Sending and receiving application and facility are swapped from
 * the received header (the batch's BHS, else its FHS, else its first MSH), BHS-11 and FHS-11 are
 * new control ids, BHS-12 and FHS-12 (reference control ids) are the received BHS-11 and FHS-11,
 * BTS-1 counts the ACK messages of its batch and FTS-1 the batches.
 */
import { formatHl7, type Hl7Batch, hl7Timestamp, newControlId } from "../../codecs/mod.ts";

/** One message of a batch: its ER7 text, and which of the batch's batches it belongs to. */
export interface BatchMessage {
  text: string;
  group: number;
}

/** The messages of a batch in order, each written as ER7 with the batch's segment terminator. */
export function batchMessages(batch: Hl7Batch): BatchMessage[] {
  const out: BatchMessage[] = [];
  batch.batches.forEach((g, group) => {
    for (const m of g.messages) {
      out.push({ text: formatHl7({ ...m, terminator: batch.terminator }), group });
    }
  });
  return out;
}

/** The number of messages in a batch. */
export function batchSize(batch: Hl7Batch): number {
  return batch.batches.reduce((n, g) => n + g.messages.length, 0);
}

/** A header segment's fields as written (`fields[n]` is HL7 field n; 1 is the separator). */
function headerFields(line: string, sep: string): string[] {
  const parts = line.split(sep);
  return [parts[0], sep, ...parts.slice(1)];
}

/** The raw FHS, BHS (in order) and first MSH lines of a batch text. */
function headerLines(text: string): { fhs?: string; bhs: string[]; msh?: string } {
  const out: { fhs?: string; bhs: string[]; msh?: string } = { bhs: [] };
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const line = raw.replace(/^[\s\ufeff]+/, "");
    const name = line.slice(0, 3);
    if (name === "FHS" && out.fhs === undefined) out.fhs = line;
    else if (name === "BHS") out.bhs.push(line);
    else if (name === "MSH" && out.msh === undefined) out.msh = line;
  }
  return out;
}

/** A response header (FHS or BHS): parties swapped from `received`, `reference` in field 12. */
function responseHeader(
  name: "FHS" | "BHS",
  received: string[],
  reference: string,
  sep: string,
  now: Date,
): string {
  const f = (n: number) => received[n] ?? "";
  return [name, f(2), f(5), f(6), f(3), f(4), hl7Timestamp(now), "", "", "", newControlId()]
    .concat(reference === "" ? [] : [reference]).join(sep);
}

/**
 * The response batch of a received batch `text` (parsed as `batch`), given each message's ACKs
 * (ER7 texts, `\r`-separated segments) with the index of the batch it came in.
 */
export function buildBatchAck(
  text: string,
  batch: Hl7Batch,
  acks: { group: number; acks: string[] }[],
  now = new Date(),
): string {
  const lines = headerLines(text);
  const first = lines.fhs ?? lines.bhs[0] ?? lines.msh ?? "MSH|^~\\&";
  const sep = first.charAt(3);
  const segments: string[] = [];
  const fhs = lines.fhs === undefined ? undefined : headerFields(lines.fhs, sep);
  const msh = headerFields(lines.msh ?? first, sep);
  if (fhs) segments.push(responseHeader("FHS", fhs, fhs[11] ?? "", sep, now));
  let bhsAt = 0;
  batch.batches.forEach((g, group) => {
    const bhs = g.BHS !== undefined && lines.bhs[bhsAt] !== undefined
      ? headerFields(lines.bhs[bhsAt++], sep)
      : undefined;
    // Without a BHS: the file's header, else the first message's MSH, names the parties.
    segments.push(responseHeader("BHS", bhs ?? fhs ?? msh, bhs?.[11] ?? "", sep, now));
    const mine = acks.filter((a) => a.group === group).flatMap((a) => a.acks);
    for (const ack of mine) segments.push(...ack.split("\r").filter((s) => s !== ""));
    segments.push(`BTS${sep}${mine.length}`);
  });
  if (fhs) segments.push(`FTS${sep}${batch.batches.length}`);
  return segments.join("\r") + "\r";
}

/**
 * A lone shift run from UTF-8 JSON bytes to UTF-8 JSON bytes: the bytes are scanned into a tape
 * (raw_json.ts), the spec's compiled program (shift_program.ts) builds the output with tape
 * positions for the input's leaves, and write_output.ts copies them as the input spelled them.
 */

import { chargeText, MAX_RUN_STEPS, outputLimit, type ShiftNode, startRun } from "../engine/mod.ts";
import { JsonWriter, JsonWriterLimit, scanJson, ScanScratch } from "./raw_json.ts";
import { compileShift, type TapeProgram } from "./shift_program.ts";
import { writeOutput } from "./write_output.ts";

/** A shift compiled for bytes. */
export class FastShift {
  readonly #program: TapeProgram;
  readonly #maxSteps: number;
  // Made on first use and kept for the next body, unless that body made them large.
  #writer: JsonWriter | undefined;
  #scratch: ScanScratch | undefined;

  private constructor(program: TapeProgram, maxSteps: number) {
    this.#program = program;
    this.#maxSteps = maxSteps;
  }

  /**
   * The shift rooted at `root` compiled for bytes, or null when it is not covered. Each run may
   * spend `maxSteps` work steps, as the walker's.
   */
  static compile(root: ShiftNode, maxSteps: number = MAX_RUN_STEPS): FastShift | null {
    const program = compileShift(root);
    return program === null ? null : new FastShift(program, maxSteps);
  }

  /**
   * The shift of a UTF-8 JSON document as UTF-8 JSON: the same bytes as
   * `JSON.stringify(shift(JSON.parse(text)))`. Null when the input is not valid JSON or must be
   * parsed (raw_json.ts says when). Throws what the walker throws when a limit is passed.
   */
  run(bytes: Uint8Array): Uint8Array | null {
    startRun(this.#maxSteps);
    const scratch = this.#scratch ??= new ScanScratch();
    const doc = scanJson(bytes, scratch);
    if (scratch.oversized) this.#scratch = undefined;
    if (doc === null) return null;
    const holder: Record<string, unknown> = {};
    this.#program(doc, holder);
    const w = this.#writer ??= new JsonWriter();
    w.reset();
    // The walker's output budget, in bytes here: the program copies positions, the writer bytes.
    w.limit = outputLimit(this.#maxSteps);
    try {
      writeOutput(w, Object.hasOwn(holder, "root") ? holder.root : null, doc);
    } catch (err) {
      if (err instanceof JsonWriterLimit) chargeText(Infinity); // throws the walker's error
      throw err;
    } finally {
      if (w.oversized) this.#writer = undefined;
    }
    return w.result();
  }
}

/**
 * The WebAssembly build of the JSON tape scanner (scan.c): a faster scan for raw_json.ts, which
 * falls back to its JavaScript scanner when this is unavailable or asks it to.
 */

import { SCAN_WASM } from "./scan_module.ts";

/** The document is not valid JSON or must take the parsed path (scanJson returns null). */
export const DECLINED = -1;
/** The JavaScript scanner must decide (a key with escapes). */
export const RETRY_IN_JS = -2;

/** Largest input scanned here: memory a scan grows stays reserved for the process's life. */
export const WASM_SCAN_MAX = 1024 * 1024;

interface ScanExports {
  memory: WebAssembly.Memory;
  prepare(n: number): number;
  scan(n: number): number;
  scan_end(): number;
  shift_run(
    input: number,
    tape: number,
    ends: number,
    program: number,
    strings: number,
    scratch: number,
  ): number;
  output_at(): number;
  tape(): number;
  ends(): number;
  key_records(): number;
  key_count(): number;
  doubted(): number;
  doubted_count(): number;
  remember_number(start: number, end: number): void;
}

/** One instance per process: a scan's results are read out before the next scan. */
export class WasmScanner {
  readonly #ex: ScanExports;
  #bytes: Uint8Array;
  #ints: Int32Array;
  /** Where the last scan's input is (prepare's answer). */
  #inputAt = 0;
  /** Where the last scan's reserved memory ended: a shift program is loaded from there. */
  #scanEnd = 0;
  /** The shift program in memory at #scanEnd, if it is still there. */
  #loaded: Int32Array | null = null;

  constructor(module: WebAssembly.Module) {
    this.#ex = new WebAssembly.Instance(module, {}).exports as unknown as ScanExports;
    this.#bytes = new Uint8Array(this.#ex.memory.buffer);
    this.#ints = new Int32Array(this.#ex.memory.buffer);
  }

  /**
   * Scans `b` (at most WASM_SCAN_MAX bytes): the record count, DECLINED or RETRY_IN_JS. The
   * tape, ends and key records are then read with the methods below, until the next scan.
   */
  scan(b: Uint8Array): number {
    const ex = this.#ex;
    const at = ex.prepare(b.length);
    if (at === 0) return RETRY_IN_JS;
    this.#views();
    this.#inputAt = at;
    // A scan of another size moves the reserved memory, and may have written over a program.
    const end = ex.scan_end();
    if (end !== this.#scanEnd) this.#loaded = null;
    this.#scanEnd = end;
    this.#bytes.set(b, at);
    return ex.scan(b.length);
  }

  /** Views of the module's memory, made again when it grew (which detaches the old ones). */
  #views(): void {
    const buffer = this.#ex.memory.buffer;
    if (this.#bytes.buffer !== buffer) {
      this.#bytes = new Uint8Array(buffer);
      this.#ints = new Int32Array(buffer);
    }
  }

  /**
   * Runs a shift program (shift_wasm.ts: its ints and strings) over the document just scanned,
   * after the caller settled its doubted numbers. Returns the output's bytes, a view of module
   * memory valid until the next call, or null when the module declined (JavaScript then takes
   * the same scan).
   */
  shift(ints: Int32Array, strings: Uint8Array): Uint8Array | null {
    const ex = this.#ex;
    const programAt = this.#scanEnd;
    const stringsAt = programAt + ints.length * 4;
    const scratch = stringsAt + strings.length;
    if (this.#loaded !== ints) {
      const need = scratch + 65536 - ex.memory.buffer.byteLength;
      if (need > 0) {
        try {
          ex.memory.grow(Math.ceil(need / 65536));
        } catch {
          return null;
        }
        this.#views();
      }
      this.#ints.set(ints, programAt >> 2);
      this.#bytes.set(strings, stringsAt);
      this.#loaded = ints;
    }
    const n = ex.shift_run(this.#inputAt, ex.tape(), ex.ends(), programAt, stringsAt, scratch);
    this.#views();
    if (n < 0) return null;
    const at = ex.output_at();
    return this.#bytes.subarray(at, at + n);
  }

  /** The first `n` ints of the tape. */
  tape(n: number): Int32Array {
    const at = this.#ex.tape() >> 2;
    return this.#ints.subarray(at, at + n);
  }

  /** The first `n` container ends. */
  ends(n: number): Int32Array {
    const at = this.#ex.ends() >> 2;
    return this.#ints.subarray(at, at + n);
  }

  /**
   * The records of numbers whose spelling JavaScript may keep: the scan wrote them as
   * irregular numbers (Kind.Number) without counting them in their containers' ends, and the
   * caller settles each one.
   */
  doubtedNumbers(): Int32Array {
    const at = this.#ex.doubted() >> 2;
    return this.#ints.subarray(at, at + this.#ex.doubted_count());
  }

  /**
   * Tells the scanner that JavaScript writes the number at bytes `start` to `end` of the
   * document just scanned as spelled: later scans copy that spelling without doubting it.
   */
  rememberNumber(start: number, end: number): void {
    this.#ex.remember_number(start, end);
  }

  /** The records of the keys that are not ASCII (their text is decoded by the caller). */
  keyRecords(): Int32Array {
    const at = this.#ex.key_records() >> 2;
    return this.#ints.subarray(at, at + this.#ex.key_count());
  }
}

let scanner: WasmScanner | null | undefined;

/** The process's scanner, made on first use; null when WebAssembly cannot run it. */
export function wasmScanner(): WasmScanner | null {
  if (scanner === undefined) {
    try {
      scanner = new WasmScanner(new WebAssembly.Module(Uint8Array.fromBase64(SCAN_WASM)));
    } catch {
      scanner = null;
    }
  }
  return scanner;
}

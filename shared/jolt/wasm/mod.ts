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
    if (this.#bytes.buffer !== ex.memory.buffer) {
      this.#bytes = new Uint8Array(ex.memory.buffer);
      this.#ints = new Int32Array(ex.memory.buffer);
    }
    this.#bytes.set(b, at);
    return ex.scan(b.length);
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

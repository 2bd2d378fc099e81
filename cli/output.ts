/**
 * Where gwcli writes: results on stdout, status lines on stdout unless `-q`, warnings and errors
 * on stderr, and diagnostics on stderr at `-v` (1), `-vv` (2) and `-vvv` (3).
 */

/** The two streams, as functions (tests capture them). */
export interface Sinks {
  stdout(text: string): void;
  stderr(text: string): void;
}

/** Output levels of diagnostics. */
export type Verbosity = 0 | 1 | 2 | 3;

/** Writes gwcli's output according to `-q` and `-v`. */
export class Output {
  #sinks: Sinks;
  /** `-v` count, 0-3. */
  verbosity: Verbosity = 0;
  /** `-q`: no status lines. */
  quiet = false;
  /** Colours in tables (a terminal without `NO_COLOR`). */
  readonly color: boolean;
  /** stderr is a terminal (progress redraws one line). */
  readonly terminal: boolean;
  #lastQuarter = -1;

  constructor(sinks: Sinks, color = false, terminal = false) {
    this.#sinks = sinks;
    this.color = color;
    this.terminal = terminal;
  }

  /**
   * A progress bar on stderr, left out with `-q`: `done` of `total` bytes (total null: unknown).
   * On a terminal one line is redrawn; otherwise a line is written at each quarter.
   */
  progress(label: string, done: number, total: number | null): void {
    if (this.quiet) return;
    const mib = (n: number) => (n / (1 << 20)).toFixed(1);
    if (total === null || total <= 0) {
      if (this.terminal) this.#sinks.stderr(`\r${label} ${mib(done)} MiB`);
      return;
    }
    const fraction = Math.min(1, done / total);
    const percent = Math.floor(fraction * 100);
    if (this.terminal) {
      const width = 30;
      const filled = Math.round(fraction * width);
      this.#sinks.stderr(
        `\r${label} [${"#".repeat(filled)}${"-".repeat(width - filled)}] ${
          String(percent).padStart(3)
        }% ${mib(done)}/${mib(total)} MiB${fraction === 1 ? "\n" : ""}`,
      );
      return;
    }
    const quarter = Math.floor(fraction * 4);
    if (quarter > this.#lastQuarter) {
      this.#lastQuarter = quarter;
      this.#sinks.stderr(`${label} ${percent}% (${mib(done)} of ${mib(total)} MiB)\n`);
    }
  }

  /** Sets the levels from the global options. */
  configure(verbose: number, quiet: boolean): void {
    this.verbosity = Math.max(0, Math.min(3, verbose)) as Verbosity;
    this.quiet = quiet;
  }

  /** A result line (table, JSON, token): always printed on stdout. */
  print(text: string): void {
    this.#sinks.stdout(text.endsWith("\n") ? text : text + "\n");
  }

  /** A status line on stdout, left out with `-q`. */
  info(text: string): void {
    if (!this.quiet) this.print(text);
  }

  /** A note on stderr about something gwcli did on its own, left out with `-q`. */
  notice(text: string): void {
    if (!this.quiet) this.#sinks.stderr(`note: ${text}\n`);
  }

  /** A warning on stderr (even with `-q`). */
  warn(text: string): void {
    this.#sinks.stderr(`warning: ${text}\n`);
  }

  /** An error line on stderr. */
  error(text: string): void {
    this.#sinks.stderr(`error: ${text}\n`);
  }

  /** Raw text on stderr (commander's own messages). */
  stderr(text: string): void {
    this.#sinks.stderr(text);
  }

  /** Raw text on stdout (commander's help). */
  stdout(text: string): void {
    this.#sinks.stdout(text);
  }

  /** A diagnostic on stderr when the verbosity is at least `level`. */
  debug(level: 1 | 2 | 3, text: string): void {
    if (this.verbosity >= level) this.#sinks.stderr(`${"*".repeat(level)} ${text}\n`);
  }
}

/** Writes all of `text` to a Deno stream synchronously. */
export function writeAllSync(stream: { writeSync(p: Uint8Array): number }, text: string): void {
  const bytes = new TextEncoder().encode(text);
  let offset = 0;
  while (offset < bytes.byteLength) offset += stream.writeSync(bytes.subarray(offset));
}

/** The process's stdout and stderr. */
export const processSinks: Sinks = {
  stdout: (text) => writeAllSync(Deno.stdout, text),
  stderr: (text) => writeAllSync(Deno.stderr, text),
};

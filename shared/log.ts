/** Structured logging: JSON lines (default) or human text, filtered by level. */

/** A log level, most severe first. */
export type Level = "error" | "warn" | "info" | "debug" | "trace";

const RANK: Record<Level, number> = { error: 0, warn: 1, info: 2, debug: 3, trace: 4 };

/** Field names whose values are never written to a log, whatever the caller passes. */
const SECRET_FIELDS = /authorization|token|secret|password|cookie|api[-_]?key/i;

/** Options of a logger. */
export interface LoggerOptions {
  /** The least severe level written. */
  level: Level;
  /** `json` (one object per line) or `text`. */
  format: "json" | "text";
  /** Where lines go; defaults to stderr. */
  sink?: (line: string) => void;
}

/** A structured logger with fixed context fields. */
export class Logger {
  #opts: LoggerOptions;
  #context: Record<string, unknown>;
  #encoder = new TextEncoder();

  /** A logger at `opts.level` in `opts.format`, adding `context` to every line. */
  constructor(opts: LoggerOptions, context: Record<string, unknown> = {}) {
    this.#opts = opts;
    this.#context = context;
  }

  /** A logger that adds `fields` to every line. */
  child(fields: Record<string, unknown>): Logger {
    return new Logger(this.#opts, { ...this.#context, ...fields });
  }

  /** Changes the level and the format of this logger and its children. */
  configure(level: Level, format: "json" | "text"): void {
    this.#opts.level = level;
    this.#opts.format = format;
  }

  /** True when lines go to a sink of the caller's (tests, an embedding program), not stderr. */
  get hasSink(): boolean {
    return this.#opts.sink !== undefined;
  }

  /** Writes a line formatted elsewhere (a worker thread's) where this logger writes its own. */
  writeLine(line: string): void {
    if (this.#opts.sink) this.#opts.sink(line);
    else Deno.stderr.writeSync(this.#encoder.encode(line + "\n"));
  }

  /** True when lines of `level` are written. */
  enabled(level: Level): boolean {
    return RANK[level] <= RANK[this.#opts.level];
  }

  /** Log at error level. */
  error(msg: string, fields?: Record<string, unknown>): void {
    this.#write("error", msg, fields);
  }
  /** Log at warn level. */
  warn(msg: string, fields?: Record<string, unknown>): void {
    this.#write("warn", msg, fields);
  }
  /** Log at info level. */
  info(msg: string, fields?: Record<string, unknown>): void {
    this.#write("info", msg, fields);
  }
  /** Log at debug level. */
  debug(msg: string, fields?: Record<string, unknown>): void {
    this.#write("debug", msg, fields);
  }
  /** Log at trace level. */
  trace(msg: string, fields?: Record<string, unknown>): void {
    this.#write("trace", msg, fields);
  }

  #write(level: Level, msg: string, fields?: Record<string, unknown>): void {
    if (!this.enabled(level)) return;
    const record: Record<string, unknown> = {
      ts: new Date().toISOString(),
      level,
      msg,
      ...this.#context,
      ...fields,
    };
    for (const key of Object.keys(record)) {
      if (SECRET_FIELDS.test(key)) record[key] = "[redacted]";
      else if (record[key] instanceof Error) {
        const e = record[key] as Error;
        record[key] = e.message;
      }
    }
    let line: string;
    if (this.#opts.format === "json") {
      line = JSON.stringify(record);
    } else {
      const { ts, level: lv, msg: m, ...rest } = record;
      const extra = Object.entries(rest).map(([k, v]) =>
        `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`
      ).join(" ");
      line = `${ts} ${String(lv).toUpperCase().padEnd(5)} ${m}${extra ? " " + extra : ""}`;
    }
    this.writeLine(line);
  }
}

/** A logger that writes nothing (tests, tools). */
export const silentLogger = new Logger({ level: "error", format: "json", sink: () => {} });

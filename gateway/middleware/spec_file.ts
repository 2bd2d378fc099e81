/**
 * A compiled JOLT spec loaded from a transform file and kept current: the file is watched, a valid
 * new version replaces the compiled spec for later requests, an invalid one is logged with its
 * details and the previous version stays.
 */
import { basename, dirname } from "node:path";
import type { Logger } from "../../shared/mod.ts";
import { type CompiledSpec, type CompileOptions, parseSpec } from "../../shared/jolt/mod.ts";
import type { TransformSource } from "./transform_source.ts";

const DEBOUNCE_MS = 50;

/** A live transform spec. */
export class SpecFile {
  readonly specPath: string;
  readonly file: string;
  #spec: CompiledSpec;
  readonly #options: CompileOptions;
  #version = 1;
  #watcher: Deno.FsWatcher | undefined;
  #closed = false;

  private constructor(
    specPath: string,
    file: string,
    spec: CompiledSpec,
    options: CompileOptions,
  ) {
    this.specPath = specPath;
    this.file = file;
    this.#spec = spec;
    this.#options = options;
  }

  /**
   * Load and compile (with `options`, kept for reloads); throws a message naming the file and the
   * JOLT problem when invalid.
   */
  static async load(
    source: TransformSource,
    specPath: string,
    options: CompileOptions = {},
  ): Promise<SpecFile> {
    const file = source.resolve(specPath);
    const text = await source.read(specPath);
    return new SpecFile(specPath, file, compileText(text, file, options), options);
  }

  /** The compiled spec serving requests now. */
  get spec(): CompiledSpec {
    return this.#spec;
  }

  /** Increments on every successful reload of the file. */
  get version(): number {
    return this.#version;
  }

  /** Start watching the file (its directory, so editors that replace files are seen). */
  watch(source: TransformSource, logger: Logger): void {
    if (this.#watcher || this.#closed) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const name = basename(this.file);
    try {
      this.#watcher = Deno.watchFs(dirname(this.file), { recursive: false });
    } catch (err) {
      logger.warn("cannot watch transform file; changes need a reload", {
        file: this.file,
        error: (err as Error).message,
      });
      return;
    }
    const reload = async () => {
      try {
        const text = await source.read(this.specPath);
        const next = compileText(text, this.file, this.#options);
        this.#spec = next;
        this.#version++;
        logger.info("transform reloaded", { file: this.file, version: this.#version });
      } catch (err) {
        logger.error("transform change rejected: the previous version stays", {
          file: this.file,
          error: (err as Error).message,
        });
      }
    };
    (async () => {
      for await (const event of this.#watcher!) {
        if (!event.paths.some((p) => basename(p) === name)) continue;
        if (event.kind === "access") continue;
        clearTimeout(timer);
        timer = setTimeout(reload, DEBOUNCE_MS);
      }
    })().catch(() => {});
  }

  /** Stop watching. */
  close(): void {
    this.#closed = true;
    try {
      this.#watcher?.close();
    } catch {
      // already closed
    }
    this.#watcher = undefined;
  }
}

function compileText(text: string, file: string, options: CompileOptions): CompiledSpec {
  try {
    return parseSpec(text, options);
  } catch (err) {
    throw new Error(`invalid transform ${file}: ${(err as Error).message}`, { cause: err });
  }
}

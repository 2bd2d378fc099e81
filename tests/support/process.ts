/** Running external commands and keeping the tail of their output. */

import { waitFor } from "./wait.ts";

/** Exit code and output of a finished command. */
export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Options of {@link runCommand}. */
export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Kill the command after this many milliseconds (default 120 000). */
  timeoutMs?: number;
}

/** Runs a command to completion without stdin and returns its exit code and output. */
export async function runCommand(
  command: string,
  args: string[],
  options: RunOptions = {},
): Promise<CommandResult> {
  const output = await new Deno.Command(command, {
    args,
    cwd: options.cwd,
    env: options.env,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    signal: AbortSignal.timeout(options.timeoutMs ?? 120_000),
  }).output();
  const decoder = new TextDecoder();
  return {
    code: output.code,
    stdout: decoder.decode(output.stdout),
    stderr: decoder.decode(output.stderr),
  };
}

/** Drains a byte stream, keeping only its last `limit` bytes for error messages. */
export class OutputTail {
  #chunks: Uint8Array[] = [];
  #size = 0;
  #limit: number;
  /** Settles when the stream has ended. */
  readonly done: Promise<void>;

  constructor(
    stream: ReadableStream<Uint8Array>,
    limit = 64 * 1024,
    tap?: (chunk: Uint8Array) => void,
  ) {
    this.#limit = limit;
    this.done = this.#drain(stream, tap).catch(() => {});
  }

  async #drain(
    stream: ReadableStream<Uint8Array>,
    tap?: (chunk: Uint8Array) => void,
  ): Promise<void> {
    for await (const chunk of stream) {
      tap?.(chunk);
      this.#chunks.push(chunk);
      this.#size += chunk.byteLength;
      while (this.#size - this.#chunks[0].byteLength >= this.#limit) {
        this.#size -= this.#chunks.shift()!.byteLength;
      }
    }
  }

  /** The kept bytes as text (at most about `limit` bytes). */
  text(): string {
    const all = new Uint8Array(this.#size);
    let offset = 0;
    for (const chunk of this.#chunks) {
      all.set(chunk, offset);
      offset += chunk.byteLength;
    }
    const start = Math.max(0, all.byteLength - this.#limit);
    return new TextDecoder().decode(all.subarray(start));
  }
}

/** Sends `signal`, waits up to `timeoutMs` for the exit, then kills with SIGKILL. */
export async function stopProcess(
  child: Deno.ChildProcess,
  signal: Deno.Signal = "SIGTERM",
  timeoutMs = 10_000,
): Promise<Deno.CommandStatus> {
  try {
    child.kill(signal);
  } catch {
    // already exited
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), timeoutMs);
  });
  const first = await Promise.race([child.status, timeout]);
  clearTimeout(timer);
  if (first !== "timeout") return first;
  try {
    child.kill("SIGKILL");
  } catch {
    // exited meanwhile
  }
  return await child.status;
}

/** Options of {@link spawnCaptured}. */
export interface SpawnOptions {
  cwd?: string;
  env?: Record<string, string>;
  /** Start from `env` alone, not from this process's environment (as a service manager does). */
  clearEnv?: boolean;
  /** Runs after the process has exited and its output is drained (e.g. removing a temp dir). */
  afterStop?: () => Promise<void>;
  /** Sees every chunk of stdout as it arrives (besides the kept tail). */
  onStdout?: (chunk: Uint8Array) => void;
  /** Sees every chunk of stderr as it arrives (where the gateway's log lines go). */
  onStderr?: (chunk: Uint8Array) => void;
}

/** A child process whose stdout and stderr are drained and their tails kept. */
export interface CapturedProcess {
  /** The child process. */
  child: Deno.ChildProcess;
  /** The exit status once the process has exited. */
  exited(): Deno.CommandStatus | undefined;
  /** The kept output: stderr, then stdout. */
  output(): string;
  /** SIGTERM (SIGKILL after 10 s), waits for the exit and the output, runs `afterStop`; idempotent. */
  stop(): Promise<Deno.CommandStatus>;
}

/** Spawns `command` without stdin, draining its output so it never blocks on a full pipe. */
export function spawnCaptured(
  command: string,
  args: string[],
  options: SpawnOptions = {},
): CapturedProcess {
  const child = new Deno.Command(command, {
    args,
    cwd: options.cwd,
    env: options.env,
    clearEnv: options.clearEnv,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  const stderr = new OutputTail(child.stderr, undefined, options.onStderr);
  const stdout = new OutputTail(child.stdout, undefined, options.onStdout);
  let status: Deno.CommandStatus | undefined;
  child.status.then((value) => status = value);
  let stopping: Promise<Deno.CommandStatus> | undefined;
  return {
    child,
    exited: () => status,
    output: () => `--- stderr ---\n${stderr.text()}\n--- stdout ---\n${stdout.text()}`,
    stop: () =>
      stopping ??= (async () => {
        const result = await stopProcess(child);
        await Promise.all([stderr.done, stdout.done]);
        await options.afterStop?.();
        return result;
      })(),
  };
}

/** Options of {@link waitReady}. */
export interface ReadyOptions {
  /** Named in errors, e.g. `gateway`. */
  name: string;
  /** Resolves true once the process is ready. */
  check: () => Promise<boolean>;
  /** What readiness means, for the timeout error. */
  description: string;
  timeoutMs: number;
  intervalMs?: number;
  /** More text for the error (e.g. a log file); the process output is always included. */
  details?: () => Promise<string>;
}

/** Waits until `check` passes; on an early exit or a timeout stops the process and throws with its output. */
export async function waitReady(process: CapturedProcess, options: ReadyOptions): Promise<void> {
  try {
    await waitFor(async () => {
      const status = process.exited();
      if (status) {
        throw new Error(
          `${options.name} exited with code ${status.code} before ${options.description}`,
        );
      }
      return await options.check();
    }, {
      timeoutMs: options.timeoutMs,
      intervalMs: options.intervalMs,
      description: options.description,
    });
  } catch (error) {
    const details = (await options.details?.()) ?? "";
    await process.stop();
    throw new Error(`${(error as Error).message}\n${details}${process.output()}`);
  }
}

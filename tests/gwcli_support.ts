/**
 * Running gwcli in tests: each test gets its own home directory, a clean environment (nothing of
 * the developer's leaks in, e.g. GATEWAY_API_URL), the file-based secure store (never the
 * developer's keychain) and no browser. A run goes through `runCli` in this process (the
 * program `cli/main.ts` runs, with that environment, captured output and stdin as the answers
 * of its prompts), which spares a Deno start per command. A home made with `subprocess: true`,
 * a run with `subprocess: true` or a `prefix`, and a run whose secure store is not the file
 * (the keychain reads the process's own D-Bus environment) start the `gwcli` task of deno.json
 * instead, so the end-to-end tests also prove that its permissions are enough.
 */
import { envOf, Output, resolvePaths, runCli, SecureStore } from "../cli/mod.ts";
import { removeDir, REPO_ROOT, tempDir } from "./support/mod.ts";

/** What a finished gwcli run printed. */
export interface GwcliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** An isolated home directory for gwcli. */
export interface GwcliHome {
  /** `HOME` of the runs. */
  home: string;
  /** gwcli's data directory (`$HOME/.gwcli`). */
  dir: string;
  /** The environment of every run (extend per run with `env`). */
  env: Record<string, string>;
  /** Runs gwcli to completion. */
  run(args: string[], options?: RunOptions): Promise<GwcliResult>;
  /** Starts gwcli and returns a handle to watch its output while it runs. */
  spawn(args: string[], options?: RunOptions): RunningGwcli;
  /** Removes the home directory. */
  cleanup(): Promise<void>;
}

/** Per-run options. */
export interface RunOptions {
  env?: Record<string, string>;
  /** Text written to stdin (then closed); stdin is empty otherwise. */
  stdin?: string;
  /** A command that runs gwcli, e.g. `["keyctl", "session", "-"]` (a new kernel session keyring). */
  prefix?: string[];
  /** Runs the `gwcli` task as a subprocess (end to end) rather than `runCli` in this process. */
  subprocess?: boolean;
}

/** Options of a home. */
export interface HomeOptions {
  /** Every run is a subprocess of the `gwcli` task (end-to-end tests). */
  subprocess?: boolean;
}

/** A gwcli process still running. */
export interface RunningGwcli {
  /** Resolves with the first match of `pattern` in stdout (rejects on exit or after 30 s). */
  waitForStdout(pattern: RegExp): Promise<RegExpMatchArray>;
  /** Waits for the exit. */
  finish(): Promise<GwcliResult>;
}

/** `GWCLI_TEST_SUBPROCESS=1`: every run is a subprocess, as before runCli ran in-process. */
const ALL_SUBPROCESS = Deno.env.get("GWCLI_TEST_SUBPROCESS") === "1";

let denoDir: Promise<string> | undefined;

/** The DENO_DIR of this Deno (a new HOME must not mean a cold module cache). */
function currentDenoDir(): Promise<string> {
  return denoDir ??= (async () => {
    const fromEnv = Deno.env.get("DENO_DIR");
    if (fromEnv) return fromEnv;
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["info", "--json"],
      cwd: REPO_ROOT,
      stdout: "piped",
      stderr: "null",
    }).output();
    return JSON.parse(new TextDecoder().decode(out.stdout)).denoDir;
  })();
}

/** The arguments of `deno task gwcli` after `deno`. */
export async function gwcliTaskArgs(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(`${REPO_ROOT}/deno.json`));
  const task: string = config.tasks.gwcli;
  const words = task.split(/\s+/);
  if (words[0] !== "deno") throw new Error(`the gwcli task does not start with deno: ${task}`);
  return words.slice(1);
}

/** Creates an isolated home; `env` is added to every run's environment. */
export async function makeGwcliHome(
  env: Record<string, string> = {},
  homeOptions: HomeOptions = {},
): Promise<GwcliHome> {
  const home = await tempDir("gwcli-home-");
  const baseEnv: Record<string, string> = {
    HOME: home,
    PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin",
    DENO_DIR: await currentDenoDir(),
    DENO_NO_UPDATE_CHECK: "1",
    NO_COLOR: "1",
    GWCLI_SECURE_STORE: "file",
    GWCLI_NO_BROWSER: "1",
    ...env,
  };
  const taskArgs = await gwcliTaskArgs();
  const command = (args: string[], options: RunOptions) => {
    const [program, ...prefixArgs] = [...(options.prefix ?? []), Deno.execPath()];
    return new Deno.Command(program, {
      args: [...prefixArgs, ...taskArgs, ...args],
      cwd: REPO_ROOT,
      clearEnv: true,
      env: { ...baseEnv, ...options.env },
      stdin: options.stdin === undefined ? "null" : "piped",
      stdout: "piped",
      stderr: "piped",
    });
  };
  const feed = async (child: Deno.ChildProcess, stdin: string | undefined) => {
    if (stdin === undefined) return;
    const writer = child.stdin.getWriter();
    await writer.write(new TextEncoder().encode(stdin));
    await writer.close();
  };
  const inProcess = (options: RunOptions) => {
    const env = { ...baseEnv, ...options.env };
    return !homeOptions.subprocess && !options.subprocess && !options.prefix &&
      env.GWCLI_SECURE_STORE === "file" && !ALL_SUBPROCESS;
  };
  const start = (args: string[], options: RunOptions): Started => {
    if (inProcess(options)) return startInProcess(args, { ...baseEnv, ...options.env }, options);
    const child = command(args, options).spawn();
    feed(child, options.stdin);
    const out = new Captured();
    const drained = Promise.all([
      out.pump(child.stdout, "stdout"),
      out.pump(child.stderr, "stderr"),
    ]);
    const done = (async () => {
      const { code } = await child.status;
      await drained;
      return code;
    })();
    return { out, done };
  };
  return {
    home,
    dir: `${home}/.gwcli`,
    env: baseEnv,
    async run(args, options = {}) {
      const { out, done } = start(args, options);
      const code = await done;
      return { code, stdout: out.stdout, stderr: out.stderr };
    },
    spawn(args, options = {}) {
      const { out, done } = start(args, options);
      let exited = false;
      done.then(() => out.changed(exited = true), () => out.changed(exited = true));
      return {
        waitForStdout(pattern) {
          return new Promise((resolve, reject) => {
            const timer = setTimeout(
              () => finish(new Error(`no ${pattern} in 30 s:\n${out.stdout}\n${out.stderr}`)),
              30_000,
            );
            const check = () => {
              const m = out.stdout.match(pattern);
              if (m) finish(undefined, m);
              else if (exited) {
                finish(new Error(`gwcli exited without ${pattern}:\n${out.stdout}\n${out.stderr}`));
              }
            };
            const finish = (err?: Error, m?: RegExpMatchArray) => {
              clearTimeout(timer);
              out.listeners.delete(check);
              if (err) reject(err);
              else resolve(m!);
            };
            out.listeners.add(check);
            check();
          });
        },
        async finish() {
          const code = await done;
          return { code, stdout: out.stdout, stderr: out.stderr };
        },
      };
    },
    cleanup: () => removeDir(home),
  };
}

/** Output of a run so far, with listeners told of every change. */
class Captured {
  stdout = "";
  stderr = "";
  readonly listeners = new Set<() => void>();

  write(stream: "stdout" | "stderr", text: string): void {
    this[stream] += text;
    this.changed();
  }

  changed(_?: unknown): void {
    for (const l of [...this.listeners]) l();
  }

  async pump(stream: ReadableStream<Uint8Array>, name: "stdout" | "stderr"): Promise<void> {
    const decoder = new TextDecoder();
    for await (const chunk of stream) this.write(name, decoder.decode(chunk, { stream: true }));
  }
}

/** A run begun: its output so far and its exit code to come. */
interface Started {
  out: Captured;
  done: Promise<number>;
}

/**
 * `runCli` in this process, as `cli/main.ts` runs it: `env` is the whole environment, stdout and
 * stderr are captured, and prompts read the lines of `stdin` (stdin is no terminal, as in a
 * subprocess: a prompt asked anyway gets end of input once they are used up).
 */
function startInProcess(args: string[], env: Record<string, string>, options: RunOptions): Started {
  const out = new Captured();
  const answers = options.stdin === undefined ? [] : options.stdin.split("\n");
  if (answers.at(-1) === "") answers.pop();
  const done = runCli(args, {
    env: envOf(env),
    sinks: { stdout: (t) => out.write("stdout", t), stderr: (t) => out.write("stderr", t) },
    prompter: {
      interactive: false,
      ask: (question) => {
        out.write("stderr", question);
        return Promise.resolve(answers.length ? answers.shift()! : null);
      },
    },
  });
  return { out, done };
}

/** Runs `fn` with a fresh home and removes it afterwards. */
export async function withGwcliHome(
  fn: (home: GwcliHome) => Promise<void>,
  env: Record<string, string> = {},
  homeOptions: HomeOptions = {},
): Promise<void> {
  const home = await makeGwcliHome(env, homeOptions);
  try {
    await fn(home);
  } finally {
    await home.cleanup();
  }
}

/** Stores `token` for `apiUrl` in the home's secure store, as `login` would (skips the browser). */
export async function seedLogin(home: GwcliHome, apiUrl: string, token: string): Promise<void> {
  const env = envOf(home.env);
  const sink = () => {};
  const store = new SecureStore({
    paths: resolvePaths(env),
    env,
    out: new Output({ stdout: sink, stderr: sink }),
    apiUrl,
  });
  await store.save({
    access_token: token,
    token_type: "Bearer",
    api_url: apiUrl,
    obtained_at: new Date().toISOString(),
    source: "device_login",
  });
}

/** Fails with the run's output unless it exited with `code`. */
export function expectExit(result: GwcliResult, code: number, what = "gwcli"): GwcliResult {
  if (result.code !== code) {
    throw new Error(
      `${what} exited with ${result.code}, expected ${code}\n--- stdout ---\n${result.stdout}` +
        `\n--- stderr ---\n${result.stderr}`,
    );
  }
  return result;
}

/**
 * Running gwcli as a subprocess in end-to-end tests: each test gets its own home directory, a
 * clean environment (nothing of the developer's leaks in, e.g. GATEWAY_API_URL), the file-based
 * secure store (never the developer's keychain) and no browser. The command line is the
 * `gwcli` task of deno.json, so the tests also prove that its permissions are enough.
 */
import { envOf, Output, resolvePaths, SecureStore } from "../cli/mod.ts";
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
}

/** A gwcli process still running. */
export interface RunningGwcli {
  /** Resolves with the first match of `pattern` in stdout (rejects on exit or after 30 s). */
  waitForStdout(pattern: RegExp): Promise<RegExpMatchArray>;
  /** Waits for the exit. */
  finish(): Promise<GwcliResult>;
}

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

function decode(bytes: Uint8Array): string {
  return new TextDecoder().decode(bytes);
}

/** Creates an isolated home; `env` is added to every run's environment. */
export async function makeGwcliHome(env: Record<string, string> = {}): Promise<GwcliHome> {
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
  return {
    home,
    dir: `${home}/.gwcli`,
    env: baseEnv,
    async run(args, options = {}) {
      const child = command(args, options).spawn();
      await feed(child, options.stdin);
      const out = await child.output();
      return { code: out.code, stdout: decode(out.stdout), stderr: decode(out.stderr) };
    },
    spawn(args, options = {}) {
      const child = command(args, options).spawn();
      feed(child, options.stdin);
      let stdout = "";
      let stderr = "";
      const listeners = new Set<() => void>();
      const pump = async (stream: ReadableStream<Uint8Array>, onText: (t: string) => void) => {
        const decoder = new TextDecoder();
        for await (const chunk of stream) {
          onText(decoder.decode(chunk, { stream: true }));
          for (const l of listeners) l();
        }
      };
      const drained = Promise.all([
        pump(child.stdout, (t) => stdout += t),
        pump(child.stderr, (t) => stderr += t),
      ]);
      const status = child.status;
      let exited = false;
      status.then(() => {
        exited = true;
        for (const l of listeners) l();
      });
      return {
        waitForStdout(pattern) {
          return new Promise((resolve, reject) => {
            const timer = setTimeout(
              () => done(new Error(`no ${pattern} in 30 s:\n${stdout}\n${stderr}`)),
              30_000,
            );
            const check = () => {
              const m = stdout.match(pattern);
              if (m) done(undefined, m);
              else if (exited) {
                done(new Error(`gwcli exited without ${pattern}:\n${stdout}\n${stderr}`));
              }
            };
            const done = (err?: Error, m?: RegExpMatchArray) => {
              clearTimeout(timer);
              listeners.delete(check);
              if (err) reject(err);
              else resolve(m!);
            };
            listeners.add(check);
            check();
          });
        },
        async finish() {
          const { code } = await status;
          await drained;
          return { code, stdout, stderr };
        },
      };
    },
    cleanup: () => removeDir(home),
  };
}

/** Runs `fn` with a fresh home and removes it afterwards. */
export async function withGwcliHome(
  fn: (home: GwcliHome) => Promise<void>,
  env: Record<string, string> = {},
): Promise<void> {
  const home = await makeGwcliHome(env);
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

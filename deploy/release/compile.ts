/**
 * `deno task compile[:gwcli|:cloud] [--target OS-ARCH ...]`: the standalone executables of the
 * gateway, gwcli and the cloud, with the permissions and flags their `deno task` entries run with.
 * Without `--target`: this machine's, to `dist/<name>`; with it, to `dist/<os>-<arch>/<name>`.
 * `deno compile` downloads the runtime it embeds (`denort`) from dl.deno.land for a target it has
 * not cached; where that site cannot be reached the task says so in one line.
 */
import { parseArgs } from "node:util";
import { releasePlatform } from "../../cli/install/mod.ts";

/** `deno compile --target` names by release platform. */
export const COMPILE_TARGETS: Record<string, string> = {
  "linux-x86_64": "x86_64-unknown-linux-gnu",
  "linux-aarch64": "aarch64-unknown-linux-gnu",
  "darwin-x86_64": "x86_64-apple-darwin",
  "darwin-aarch64": "aarch64-apple-darwin",
  "windows-x86_64": "x86_64-pc-windows-msvc",
};

/** What each executable is compiled from, with which flags. */
export const PROGRAMS: Record<string, { entry: string; flags: string[] }> = {
  gateway: {
    entry: "gateway/main.ts",
    flags: [
      "--allow-net",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-sys",
      // The watchdog's shutdown(2) and _exit(2) (gateway/workers/libc.ts), from glibc only.
      "--allow-ffi=/lib/x86_64-linux-gnu/libc.so.6,/lib/aarch64-linux-gnu/libc.so.6,/lib64/libc.so.6",
      "--unstable-net",
      "--unstable-no-legacy-abort",
      "--v8-flags=--max-semi-space-size=2,--enable-experimental-regexp-engine,--enable-experimental-regexp-engine-on-excessive-backtracks",
      "--include",
      "gateway/dicom/render/worker.ts",
      // The data-plane workers ([runtime] workers) are module Workers too, and the main thread's
      // watchdog thread.
      "--include",
      "gateway/workers/worker_main.ts",
      "--include",
      "gateway/workers/main_watchdog_worker.ts",
      // basic_auth checks passwords in module Workers (gateway/middleware/auth/password_pool.ts).
      "--include",
      "gateway/middleware/auth/password_worker.ts",
    ],
  },
  gwcli: {
    entry: "cli/main.ts",
    flags: [
      "--allow-net",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--allow-run",
      "--allow-ffi",
    ],
  },
  cloud: {
    entry: "cloud/main.ts",
    flags: [
      "--allow-net",
      "--allow-read",
      "--allow-write",
      "--allow-env",
      "--unstable-kv",
      "--unstable-no-legacy-abort",
      // A spec's regular expression (JOLT split) that backtracks too much goes on in linear time.
      "--v8-flags=--enable-experimental-regexp-engine,--enable-experimental-regexp-engine-on-excessive-backtracks",
      // JOLT previews run in module Workers (cloud/preview/).
      "--include",
      "cloud/preview/worker.ts",
    ],
  },
};

/** A compile failure with a message for people. */
export class CompileError extends Error {}

/** The platform name of this machine (`linux-x86_64`). */
export function currentTarget(): string {
  const p = releasePlatform(Deno.build.os, Deno.build.arch);
  return `${p.os}-${p.arch}`;
}

/** Compiles `program` for `target` (this machine when undefined) to `output`. */
export async function compileProgram(
  program: string,
  output: string,
  target?: string,
): Promise<void> {
  const spec = PROGRAMS[program];
  if (!spec) throw new CompileError(`unknown program ${program}`);
  if (target !== undefined && !COMPILE_TARGETS[target]) {
    throw new CompileError(
      `unknown --target ${target}: one of ${Object.keys(COMPILE_TARGETS).join(", ")}`,
    );
  }
  const result = await new Deno.Command(Deno.execPath(), {
    args: [
      "compile",
      ...spec.flags,
      ...(target ? ["--target", COMPILE_TARGETS[target]] : []),
      "--output",
      output,
      spec.entry,
    ],
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (result.success) return;
  const text = new TextDecoder().decode(result.stderr);
  const name = target ?? currentTarget();
  if (/dl\.deno\.land|denort/i.test(text)) {
    throw new CompileError(
      `deno compile could not download the ${name} runtime (denort) from dl.deno.land: ` +
        "build on a machine that reaches it",
    );
  }
  const lines = text.trim().split("\n").filter((l) => !/^\s*(\d+:|at |Stack)/.test(l));
  throw new CompileError(`deno compile of ${program} for ${name} failed: ${lines.at(-1)}`);
}

if (import.meta.main) {
  const { values, positionals } = parseArgs({
    args: Deno.args,
    allowPositionals: true,
    options: { target: { type: "string", multiple: true } },
  });
  const program = positionals[0] ?? "gateway";
  try {
    const targets = values.target ?? [];
    if (targets.length === 0) {
      await compileProgram(program, `dist/${program}`);
      console.log(`dist/${program}`);
    }
    for (const target of targets) {
      const exe = target.startsWith("windows") ? ".exe" : "";
      const output = `dist/${target}/${program}${exe}`;
      await compileProgram(program, output, target);
      console.log(output);
    }
  } catch (err) {
    console.error(`compile: ${(err as Error).message}`);
    Deno.exit(1);
  }
}

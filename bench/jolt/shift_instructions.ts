/**
 * Instructions per run of the WebAssembly shift (shared/jolt/wasm/shift.c) on the benchmark's
 * 20-rule shift, counted by valgrind on a native build of shift.c: a number that does not move
 * with the machine's load, for judging changes to the interpreter (timings on a shared VM move by
 * more than most changes do).
 *
 *   deno run -A bench/jolt/shift_instructions.ts [--top 15]
 *
 * It runs the shift once in WebAssembly, captures the module's memory and the arguments of that
 * shift_run call, then builds callgrind/harness.c with clang and runs it under
 * `valgrind --tool=callgrind` twice (1 and 1001 runs): the difference divided by 1000 is the count
 * per run, without the process's start. Needs Debian's `clang` and `valgrind` (not in CI).
 */
import { parseArgs } from "node:util";
import { ShiftOp } from "../../shared/jolt/shift.ts";
import { synthetic } from "./main.ts";

/** The exports of the scanner's module, as far as this needs them. */
interface ShiftExports {
  memory: WebAssembly.Memory;
  shift_run(...args: number[]): number;
}

/** The last shift_run call: the module's memory before it, and its arguments. */
let captured: { memory: Uint8Array; args: number[] } | null = null;

/**
 * Wraps WebAssembly.Instance so that the scanner's instance (made on first use) reports its
 * shift_run calls; nothing in the engine knows.
 */
function captureShiftRuns(): void {
  const Original = WebAssembly.Instance;
  const Wrapped = function (module: WebAssembly.Module, imports?: WebAssembly.Imports) {
    const instance = new Original(module, imports);
    const ex = instance.exports as unknown as ShiftExports;
    if (typeof ex.shift_run !== "function") return instance;
    const exports = {
      ...instance.exports,
      shift_run(...args: number[]): number {
        captured = { memory: new Uint8Array(ex.memory.buffer).slice(), args };
        return ex.shift_run(...args);
      },
    };
    return { exports };
  } as unknown as typeof WebAssembly.Instance;
  (WebAssembly as { Instance: typeof WebAssembly.Instance }).Instance = Wrapped;
}

async function run(cmd: string, args: string[]): Promise<string> {
  const out = await new Deno.Command(cmd, { args, stdout: "piped", stderr: "piped" }).output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`${cmd} ${args.join(" ")} failed:\n${text}`);
  return text;
}

/** Total instructions of a callgrind output file, and the top functions by their own count. */
async function callgrind(harness: string, dir: string, runs: number): Promise<string> {
  const file = `${dir}/callgrind.${runs}.out`;
  await run("valgrind", [
    "--tool=callgrind",
    `--callgrind-out-file=${file}`,
    harness,
    dir,
    String(runs),
  ]);
  return file;
}

function totalOf(annotated: string): number {
  const m = /([\d,]+) \(100\.0%\)\s+PROGRAM TOTALS/.exec(annotated);
  if (!m) throw new Error(`no total in callgrind_annotate output:\n${annotated.slice(0, 500)}`);
  return Number(m[1].replaceAll(",", ""));
}

async function main() {
  const { values } = parseArgs({
    args: Deno.args,
    options: { top: { type: "string", default: "15" } },
  });
  captureShiftRuns();
  const { input, spec } = synthetic();
  const op = new ShiftOp((spec[0] as { spec: unknown }).spec);
  if (!op.inWasm) throw new Error("the benchmark shift does not run in WebAssembly");
  const bytes = new TextEncoder().encode(JSON.stringify(input));
  op.applyJson(bytes); // settles the document's numbers once, as in a running gateway
  const output = op.applyJson(bytes);
  if (captured === null || output === null) throw new Error("shift_run was not called");
  const { memory, args } = captured as { memory: Uint8Array; args: number[] };

  const dir = await Deno.makeTempDir({ prefix: "shift-instructions-" });
  try {
    await Deno.writeFile(`${dir}/memory.bin`, memory);
    await Deno.writeTextFile(`${dir}/args.txt`, args.join(" "));
    await Deno.writeFile(`${dir}/expected.json`, output);
    const harness = `${dir}/harness`;
    const source = new URL("./callgrind/harness.c", import.meta.url).pathname;
    await run("clang", [
      "-O2",
      "-g",
      "-gdwarf-4",
      "-no-pie",
      "-fno-pic",
      "-w",
      "-o",
      harness,
      source,
    ]);
    console.log((await run(harness, [dir, "1"])).trim());
    const one = await run("callgrind_annotate", [await callgrind(harness, dir, 1)]);
    const many = await run("callgrind_annotate", [await callgrind(harness, dir, 1001)]);
    const perRun = (totalOf(many) - totalOf(one)) / 1000;
    console.log(
      `\nsynthetic 20-rule shift (${bytes.length} B in, ${output.length} B out): ` +
        `${Math.round(perRun).toLocaleString("en-US")} instructions per shift_run\n`,
    );
    console.log(`functions by their own instructions (1001 runs):`);
    const rows = many.split("\n").flatMap((line) => {
      const m = /^\s*([\d,]+) \(\s*([\d.]+)%\)\s+\S*shift\.c:(\S+)/.exec(line);
      return m ? [`${m[1].padStart(12)}  ${m[2].padStart(5)} %  ${m[3]}`] : [];
    });
    for (const row of rows.slice(0, Number(values.top))) console.log(row);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

if (import.meta.main) await main();

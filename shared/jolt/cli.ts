/**
 * `deno task jolt SPEC.json < input.json`: applies a JOLT chain spec to the JSON on stdin and
 * prints the result (2-space indent). Errors go to stderr with exit status 1.
 */

import { JoltSpecError, JoltTransformError, parseSpec } from "./mod.ts";

async function readStdin(): Promise<string> {
  const chunks: Uint8Array[] = [];
  for await (const chunk of Deno.stdin.readable) chunks.push(chunk);
  const all = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let offset = 0;
  for (const c of chunks) {
    all.set(c, offset);
    offset += c.length;
  }
  return new TextDecoder().decode(all);
}

/** Runs the CLI; returns the exit status. */
export async function main(args: readonly string[]): Promise<number> {
  if (args.length !== 1 || args[0] === "-h" || args[0] === "--help") {
    console.error("usage: deno task jolt SPEC.json < input.json");
    return 1;
  }
  try {
    const spec = parseSpec(await Deno.readTextFile(args[0]));
    let input: unknown;
    try {
      input = JSON.parse(await readStdin());
    } catch (err) {
      console.error(`jolt: invalid input JSON: ${(err as Error).message}`);
      return 1;
    }
    console.log(JSON.stringify(spec.apply(input), null, 2));
    return 0;
  } catch (err) {
    if (err instanceof JoltSpecError || err instanceof JoltTransformError) {
      console.error(`jolt: ${err.message}`);
    } else if (err instanceof Deno.errors.NotFound) {
      console.error(`jolt: spec file not found: ${args[0]}`);
    } else {
      console.error(`jolt: ${(err as Error).message ?? err}`);
    }
    return 1;
  }
}

if (import.meta.main) Deno.exit(await main(Deno.args));

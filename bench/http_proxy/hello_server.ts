/** The bare baseline of the echo comparison: `Deno.serve` answering "hello" (flag: --port N). */

import { parseArgs } from "node:util";

const { values } = parseArgs({ options: { port: { type: "string" } } });
const port = Number(values.port ?? "8000");
const body = new TextEncoder().encode("hello");

Deno.serve(
  { hostname: "127.0.0.1", port, onListen() {} },
  () => new Response(body, { headers: { "content-type": "text/plain" } }),
);

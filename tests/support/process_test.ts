import assert from "node:assert/strict";
import { OutputTail, runCommand, stopProcess } from "./process.ts";

Deno.test("runCommand: exit code, stdout and stderr", async () => {
  const result = await runCommand("sh", ["-c", "echo out; echo err >&2; exit 4"]);
  assert.deepEqual(result, { code: 4, stdout: "out\n", stderr: "err\n" });
});

Deno.test("OutputTail: keeps only the last bytes of a stream", async () => {
  const encoder = new TextEncoder();
  const stream = ReadableStream.from(["aaaa", "bbbb", "cccc"].map((s) => encoder.encode(s)));
  const tail = new OutputTail(stream, 6);
  await tail.done;
  assert.equal(tail.text(), "bbcccc");
});

Deno.test("stopProcess: SIGTERM ends a sleeping child", async () => {
  const child = new Deno.Command("sleep", { args: ["30"], stdin: "null", stdout: "null" }).spawn();
  const status = await stopProcess(child);
  assert.equal(status.signal, "SIGTERM");
  assert.equal((await stopProcess(child)).signal, "SIGTERM");
});

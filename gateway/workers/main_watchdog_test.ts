/**
 * The main thread's watchdog, in a process of its own (it may end it): a main thread blocked past
 * the miss threshold is logged by the watchdog thread and, once it runs again, by itself; blocked
 * past the exit threshold, the process exits 70 while the main thread is still blocked.
 */
import { assert, assertEquals } from "../../tests/assert.ts";

/** A script that starts the watchdog, then blocks its main thread for `blockMs`. */
function script(missMs: number, exitMs: number, blockMs: number): string {
  const url = (path: string) => new URL(path, import.meta.url).href;
  return `
import { MainWatchdog } from "${url("./main_watchdog.ts")}";
import { Logger } from "${url("../../shared/mod.ts")}";
import { createMetrics } from "${url("../observability/mod.ts")}";
const { promise: logged, resolve } = Promise.withResolvers();
const logger = new Logger({ level: "info", format: "json", sink: (line) => {
  console.log(line);
  if (line.includes("main thread was unresponsive")) resolve();
} });
const metrics = createMetrics();
const watchdog = new MainWatchdog({ logger, metrics });
watchdog.configure({ missMs: ${missMs}, exitMs: ${exitMs} });
const end = performance.now() + ${blockMs};
while (performance.now() < end) {}
console.log("the block ran out");
await logged;
console.log(metrics.render().split("\\n").filter((l) => l.startsWith("gateway_watchdog")).join("\\n"));
watchdog.stop();
`;
}

async function run(source: string): Promise<{ code: number; stdout: string; stderr: string }> {
  const file = await Deno.makeTempFile({ prefix: "main-watchdog-", suffix: ".ts" });
  try {
    await Deno.writeTextFile(file, source);
    const out = await new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", file],
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).output();
    const text = new TextDecoder();
    return { code: out.code, stdout: text.decode(out.stdout), stderr: text.decode(out.stderr) };
  } finally {
    await Deno.remove(file);
  }
}

Deno.test("main watchdog: a blocked main thread is logged by the watchdog thread, then by itself", async () => {
  const { code, stdout, stderr } = await run(script(200, 0, 1_500));
  assertEquals(code, 0, stderr);
  assert(stderr.includes("main thread unresponsive: its event loop is blocked"), stderr);
  assert(stdout.includes('"msg":"main thread was unresponsive"'), stdout);
  assert(stdout.includes('gateway_watchdog_misses_total{worker="0"} 1'), stdout);
});

Deno.test("main watchdog: past the exit threshold the process exits 70 while its main thread is blocked", async () => {
  const { code, stdout, stderr } = await run(script(200, 1_000, 60_000));
  assertEquals(code, 70, stderr);
  assert(!stdout.includes("the block ran out"), "the process ran out its 60 s block");
  assert(stderr.includes("the process exits for its supervisor to restart it"), stderr);
});

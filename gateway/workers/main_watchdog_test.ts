/**
 * The main thread's watchdog, in a process of its own (it may end it): a main thread blocked past
 * the miss threshold is logged by the watchdog thread and, once it runs again, by itself; blocked
 * past the exit threshold, the process exits 70 while the main thread is still blocked.
 */
import { assert, assertEquals } from "../../tests/assert.ts";

/**
 * A script that starts the watchdog, then blocks its main thread for `blockMs`, or less: the block
 * ends early once the file `release` exists (a synchronous stat, which a blocked thread can make).
 * The test creates it when the watchdog thread has logged the miss, so the block lasts as long as
 * the watchdog takes on a loaded machine, not a guessed duration.
 */
function script(missMs: number, exitMs: number, blockMs: number, release: string): string {
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
const released = () => { try { Deno.statSync(${
    JSON.stringify(release)
  }); return true; } catch { return false; } };
const end = performance.now() + ${blockMs};
while (performance.now() < end && !released()) {}
console.log("the block ran out");
await logged;
console.log(metrics.render().split("\\n").filter((l) => l.startsWith("gateway_watchdog")).join("\\n"));
watchdog.stop();
`;
}

/** The watchdog thread's line for a miss, on standard error. */
const MISS_LINE = "main thread unresponsive: its event loop is blocked";

/**
 * Runs the script made by `make` (given the release file's path); with `releaseOnMiss`, creates
 * the release file once the watchdog thread's miss line is on standard error.
 */
async function run(
  make: (release: string) => string,
  releaseOnMiss: boolean,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const dir = await Deno.makeTempDir({ prefix: "main-watchdog-" });
  const release = `${dir}/release`;
  try {
    await Deno.writeTextFile(`${dir}/script.ts`, make(release));
    const child = new Deno.Command(Deno.execPath(), {
      args: ["run", "--allow-all", `${dir}/script.ts`],
      env: { NO_COLOR: "1" },
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const stdout = new Response(child.stdout).text();
    let stderr = "";
    for await (const text of child.stderr.pipeThrough(new TextDecoderStream())) {
      const seen = stderr.includes(MISS_LINE);
      stderr += text;
      if (releaseOnMiss && !seen && stderr.includes(MISS_LINE)) {
        await Deno.writeTextFile(release, "");
      }
    }
    return { code: (await child.status).code, stdout: await stdout, stderr };
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
}

Deno.test("main watchdog: a blocked main thread is logged by the watchdog thread, then by itself", async () => {
  // Blocked until the watchdog thread has logged it (60 s at most, a hang guard).
  const { code, stdout, stderr } = await run((release) => script(200, 0, 60_000, release), true);
  assertEquals(code, 0, stderr);
  assert(stderr.includes(MISS_LINE), stderr);
  assert(stdout.includes('"msg":"main thread was unresponsive"'), stdout);
  assert(stdout.includes('gateway_watchdog_misses_total{worker="0"} 1'), stdout);
});

Deno.test("main watchdog: past the exit threshold the process exits 70 while its main thread is blocked", async () => {
  // Never released: only the watchdog ends the block.
  const { code, stdout, stderr } = await run(
    (release) => script(200, 1_000, 60_000, release),
    false,
  );
  assertEquals(code, 70, stderr);
  assert(!stdout.includes("the block ran out"), "the process ran out its 60 s block");
  assert(stderr.includes("the process exits for its supervisor to restart it"), stderr);
});

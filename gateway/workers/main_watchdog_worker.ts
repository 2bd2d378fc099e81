/**
 * The main thread's watchdog thread (main_watchdog.ts starts it). The main thread moves a counter
 * in shared memory on a few times per miss threshold; this thread notes when it last moved. Silent
 * past `missMs`:
 * an error line on standard error (the main thread cannot write its log now). Silent past
 * `exitMs`: a last line, then the whole process exits with EXIT_CODE for its supervisor to start
 * it again (Envoy's kill timeout). Answering again after a miss: the main thread is told, and
 * logs it.
 */
/// <reference lib="deno.worker" />
import { Logger } from "../../shared/mod.ts";
import { libc } from "./libc.ts";
import type { MainWatchdogSettings, MainWatchdogUpdate } from "./main_watchdog.ts";
import { beatInterval, EXIT_CODE } from "./main_watchdog.ts";

const logger = new Logger({ level: "info", format: "json" }, { worker: 0 });
let beat: Int32Array | undefined;
/** The counter as last seen, and when (this thread's clock) it was last seen to move. */
let seen = 0;
let movedAt = 0;
let settings: MainWatchdogSettings | undefined;
let timer: ReturnType<typeof setInterval> | undefined;
/** The longest silence of the current miss, or 0 while the main thread answers. */
let missed = 0;
let cannotExit = false;

self.onmessage = (event: MessageEvent<MainWatchdogUpdate>) => {
  beat = new Int32Array(event.data.beat);
  seen = Atomics.load(beat, 0);
  movedAt = performance.now();
  settings = event.data.settings;
  clearInterval(timer);
  timer = setInterval(check, beatInterval(settings.missMs));
};

function check(): void {
  if (!beat || !settings) return;
  const count = Atomics.load(beat, 0);
  if (count !== seen) {
    seen = count;
    movedAt = performance.now();
  }
  const silent = performance.now() - movedAt;
  if (silent <= settings.missMs) {
    if (missed) self.postMessage({ type: "recovered", silentMs: Math.round(missed) });
    missed = 0;
    return;
  }
  if (!missed) {
    logger.error("main thread unresponsive: its event loop is blocked", {
      silent_ms: Math.round(silent),
    });
  }
  missed = Math.max(missed, silent);
  if (settings.exitMs > 0 && silent > Math.max(settings.exitMs, settings.missMs)) {
    const calls = libc();
    if (typeof calls === "string") {
      if (!cannotExit) logger.error("main thread unresponsive: cannot exit", { error: calls });
      cannotExit = true;
      return;
    }
    logger.error("main thread unresponsive: the process exits for its supervisor to restart it", {
      silent_ms: Math.round(silent),
      exit_code: EXIT_CODE,
    });
    calls.exit(EXIT_CODE);
  }
}

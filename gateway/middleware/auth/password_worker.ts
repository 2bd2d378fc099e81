/**
 * A password worker: checks one password against one hash at a time for password_pool.ts, off
 * the event loop that serves requests. On Linux it lowers its own thread's priority (nice 10;
 * `setpriority` with pid 0 is per thread there), so the threads that serve requests get the CPU
 * first when checks and requests compete for it; elsewhere that call would renice the whole
 * process, so it is not made.
 */
/// <reference lib="deno.worker" />
import { setPriority } from "node:os";
import { passwordMatches } from "./password_hash.ts";
import type { CheckAnswer, CheckRequest } from "./password_pool.ts";

/** The nice value of password threads on Linux (the serving threads run at 0). */
const WORKER_NICE = 10;

if (Deno.build.os === "linux") {
  try {
    setPriority(0, WORKER_NICE);
  } catch {
    // Without --allow-sys the checks still run, at the priority of the serving threads.
  }
}

self.onmessage = (e: MessageEvent<CheckRequest>) => {
  const { id, password, hash } = e.data;
  let answer: CheckAnswer;
  try {
    answer = { id, ok: passwordMatches(password, hash) };
  } catch (err) {
    answer = { id, error: (err as Error).message };
  }
  self.postMessage(answer);
};

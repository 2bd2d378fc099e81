/**
 * Durable delivery (`[backends.<name>.queue]`, docs/delivery.md): requests persisted to a
 * per-backend queue, answered 202 (a DIMSE C-STORE: Success), and delivered in the background with
 * retries, backoff and dead letters.
 *
 * @example
 * ```ts
 * import { retryAfterMs, verdictOf } from "./mod.ts";
 * import { ResponseEnvelope } from "../envelope.ts";
 *
 * console.log(verdictOf(ResponseEnvelope.json(201, {})).kind); // delivered
 * console.log(verdictOf(ResponseEnvelope.json(404, {})).kind); // dead: the same next time
 * console.log(verdictOf(ResponseEnvelope.json(503, {})).kind); // retry
 * console.log(retryAfterMs("120")); // 120000
 * ```
 *
 * @module
 */
export { DeliveryQueue, type QueueDeps, type QueueStats } from "./queue.ts";
export type { DeadLetterContent, DeadLetterEdit, QueueStore } from "./queue_store.ts";
export { DeliveryQueues, type DeliveryTarget } from "./registry.ts";
export { QueuedBackend, type QueueIntake, type QueueOpener } from "./queued_backend.ts";
export { retryAfterMs, type Verdict, verdictOf } from "./verdict.ts";
export { type MessageHeader, readMessage } from "./message_file.ts";

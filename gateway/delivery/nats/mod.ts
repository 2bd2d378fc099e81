/**
 * The NATS JetStream store of the delivery queues (`[backends.<name>.queue] store = "nats"`,
 * docs/delivery.md, docs/scaling.md): one stream per backend shared by every gateway of a
 * cluster, a durable work-queue consumer that any of them delivers from, dead letters in a stream
 * of their own and large bodies in a JetStream object store bucket.
 *
 * @example
 * ```ts
 * import { decodeMessage, encodeMessage, natsNames } from "./mod.ts";
 *
 * const names = natsNames("pacs", { ordering: "fifo" } as Parameters<typeof natsNames>[1]);
 * console.log(names.stream, names.dead, names.subject); // GATEWAY_QUEUE_PACS GATEWAY_QUEUE_PACS_DEAD gateway.queue.pacs
 *
 * const payload = encodeMessage({
 *   id: "0000000000001-000001-0a0b0c0d",
 *   backend: "pacs",
 *   pipeline: "p",
 *   endpoint: "e",
 *   protocol: "http",
 *   accepted_at: 1,
 *   method: "POST",
 *   path: "/",
 *   query: "",
 *   headers: [],
 *   metadata: {},
 *   content_type: "text/plain",
 * }, new TextEncoder().encode("hi"));
 * console.log(new TextDecoder().decode(decodeMessage(payload).body)); // hi
 * ```
 *
 * @module
 */
export { type NatsNames, natsNames, NatsQueue } from "./queue.ts";
export { connectionKey, connectionOptions } from "./connection.ts";
export { type DeadNote, decodeMessage, encodeMessage, type NatsMessageHeader } from "./message.ts";

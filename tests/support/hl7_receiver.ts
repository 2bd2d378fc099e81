/**
 * A real HL7 v2 MLLP receiver for tests and benchmarks: `@medplum/hl7`'s `Hl7Server` on a free
 * loopback port, recording every message it got (in order) and every connection it accepted, and
 * answering as the test says (an ACK code, an ERR text, no answer, or closing the connection).
 */
import { type Hl7Connection, Hl7Server } from "@medplum/hl7";
import { Hl7Message } from "@medplum/core";
import { freePort } from "./ports.ts";

/** What the receiver does with a message. */
export type ReceiverReply =
  | { ack: "AA" | "AE" | "AR" | "CA" | "CE" | "CR"; err?: string }
  | { close: true }
  | { silent: true };

/** A running receiver. */
export interface Hl7Receiver {
  port: number;
  /** Messages received, as text (segments joined with `\r`), in order. */
  messages: string[];
  /** Control ids (MSH-10) received, in order. */
  controlIds: string[];
  /** Connections accepted so far. */
  connections: number;
  /** How to answer the next messages (default AA). */
  reply: (message: Hl7Message, index: number) => ReceiverReply;
  /** Resolves once `count` messages have arrived. */
  received(count: number): Promise<void>;
  /** Resolves once `count` connections have been accepted. */
  connected(count: number): Promise<void>;
  /** Stops listening and closes every connection. */
  stop(): Promise<void>;
}

/** Starts a receiver on `port` (default a free one). */
export async function startHl7Receiver(
  port = freePort(),
  reply: Hl7Receiver["reply"] = () => ({ ack: "AA" }),
): Promise<Hl7Receiver> {
  const waiters: Array<{ done: () => boolean; resolve: () => void }> = [];
  const check = () => {
    for (const w of [...waiters]) {
      if (w.done()) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve();
      }
    }
  };
  const until = (done: () => boolean) =>
    done() ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ done, resolve }));
  const open = new Set<Hl7Connection>();
  let stopped = false;
  const receiver: Hl7Receiver = {
    port,
    messages: [],
    controlIds: [],
    connections: 0,
    reply,
    received: (count) => until(() => receiver.messages.length >= count),
    connected: (count) => until(() => receiver.connections >= count),
    async stop() {
      if (stopped) return;
      stopped = true;
      await Promise.all([...open].map((c) => c.close().catch(() => {})));
      await server.stop({ forceDrainTimeoutMs: 100 });
    },
  };
  const server = new Hl7Server((conn) => {
    receiver.connections++;
    open.add(conn);
    conn.addEventListener("close", () => open.delete(conn));
    conn.addEventListener("message", ({ message }) => {
      const index = receiver.messages.length;
      receiver.messages.push(message.toString());
      receiver.controlIds.push(message.getSegment("MSH")?.getField(10)?.toString() ?? "");
      const what = receiver.reply(message, index);
      if ("ack" in what) {
        const ack = message.buildAck({ ackCode: what.ack });
        const text = what.err === undefined
          ? ack.toString()
          : `${ack.toString()}\rERR|||207^Application internal error^HL70357|E||||${what.err}`;
        conn.send(Hl7Message.parse(text));
      } else if ("close" in what) {
        void conn.close();
      }
      check();
    });
    check();
  });
  await server.start(port);
  return receiver;
}

/** An ADT^A01 with control id `id` (ER7, `\r` between segments). */
export function adtA01(id: string, patient = "123456"): string {
  return [
    `MSH|^~\\&|SENDER|HOSP|RECEIVER|LAB|20260101120000||ADT^A01^ADT_A01|${id}|P|2.5.1`,
    `EVN|A01|20260101120000`,
    `PID|1||${patient}^^^HOSP^MR||DOE^JANE||19700101|F`,
    `PV1|1|I|WARD^101^A`,
  ].join("\r");
}

/**
 * A bounded in-memory event store per MCP session: SSE events get ids, so a client that lost a
 * stream resumes with `Last-Event-ID` and receives what it missed (the SDK then also sends the
 * priming event and `retry` field). The oldest events are dropped beyond the bound.
 */
import type { EventStore } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** Events kept per session. */
export const MAX_EVENTS = 200;

/** The events of one session, in order. */
export class SessionEventStore implements EventStore {
  #events: { id: string; streamId: string; message: JSONRPCMessage }[] = [];
  #next = 0;
  #max: number;

  constructor(max = MAX_EVENTS) {
    this.#max = max;
  }

  /** Keeps `message` of `streamId`; returns its event id. */
  storeEvent(streamId: string, message: JSONRPCMessage): Promise<string> {
    const id = `${streamId}.${++this.#next}`;
    this.#events.push({ id, streamId, message });
    if (this.#events.length > this.#max) this.#events.shift();
    return Promise.resolve(id);
  }

  /** The stream of event `eventId`, or undefined when it is unknown (or dropped). */
  getStreamIdForEventId(eventId: string): Promise<string | undefined> {
    return Promise.resolve(this.#events.find((e) => e.id === eventId)?.streamId);
  }

  /** Sends the events of the same stream after `lastEventId`; returns the stream id. */
  async replayEventsAfter(
    lastEventId: string,
    { send }: { send: (eventId: string, message: JSONRPCMessage) => Promise<void> },
  ): Promise<string> {
    const at = this.#events.findIndex((e) => e.id === lastEventId);
    if (at < 0) return "";
    const streamId = this.#events[at].streamId;
    for (const e of this.#events.slice(at + 1)) {
      if (e.streamId === streamId) await send(e.id, e.message);
    }
    return streamId;
  }
}

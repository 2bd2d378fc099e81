/** What a request to the client is: its method, fields, body and abort signal. */

import type { RequestBody } from "./upload.ts";

/** Request fields as `forEach(value, name)` yields them (lower-case names), like Headers. */
export interface HeaderSource {
  forEach(callback: (value: string, name: string) => void): void;
}

/** One request of {@link Http1Client.request}. */
export interface Http1RequestInit {
  method: string;
  /**
   * Sent as given (plus `host` from the URL when absent); framing headers are the client's. Any
   * object with Headers' `forEach` will do, so a proxy can send filtered fields without copying.
   */
  headers: HeaderSource;
  body: RequestBody;
  /**
   * Aborting closes the socket and rejects (or errors the body) with the signal's reason. An
   * `AbortSignal` will do, or any cheaper object of the same shape ({@link AbortHook}).
   */
  signal?: AbortHook;
}

/** What listens to an {@link AbortHook}: an object, so a listener need not be a closure. */
export interface AbortListener {
  handleEvent(): void;
}

/**
 * The part of `AbortSignal` the client uses: an `AbortSignal` is one, and so is a caller's own
 * lighter object (the gateway's backend call, which then needs no `AbortController` per request).
 * Listeners are objects and are called once, on abort.
 */
export interface AbortHook {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: "abort", listener: AbortListener): void;
  removeEventListener(type: "abort", listener: AbortListener): void;
}

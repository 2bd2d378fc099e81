/** The contract between the HTTP-family backends and their outbound credentials. */

/** One request header: lower-case name and value. */
export type HeaderField = readonly [name: string, value: string];

/** What a backend sends to prove who it is. */
export interface UpstreamCredentials {
  /**
   * The header fields to add to a request (replacing any the client sent under those names). A
   * promise only while a token is being fetched; throws a GatewayError (502
   * `backend_auth_failed`) when none can be had.
   */
  fields(signal: AbortSignal): readonly HeaderField[] | Promise<readonly HeaderField[]>;
  /**
   * The upstream answered 401 to a request sent with `used`: forget them. True when asking again
   * may give different ones (the request is then retried once, if it can be).
   */
  rejected(used: readonly HeaderField[]): boolean;
  /** Stop timers. */
  close(): void;
}

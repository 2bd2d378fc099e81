/** The one error type of the HTTP/1.1 client, with a machine-readable code. */

/** Why a request failed (abort and timeout signals surface as the signal's reason instead). */
export type Http1ErrorCode =
  /** The client was closed. */
  | "client_closed"
  /** The request cannot be sent as given (bad method, header, URL or declared length). */
  | "invalid_request"
  /** The upstream refused the TCP connection. */
  | "connection_refused"
  /** TCP connect (and TLS handshake) took longer than `connectTimeoutMs`. */
  | "connect_timeout"
  /** Any other connect failure (DNS, unreachable, ...). */
  | "connect_failed"
  /** The TLS handshake failed (certificate, protocol). */
  | "tls_failed"
  /** The connection closed before any byte of the response arrived. */
  | "connection_closed"
  /** The response is not valid HTTP/1.1 (or is over a limit). */
  | "protocol"
  /** A request body stream produced a different length than its declared content-length. */
  | "body_length"
  /** Reading or writing the socket failed. */
  | "io";

/** An HTTP/1.1 client failure; `code` tells which kind. */
export class Http1Error extends Error {
  override name = "Http1Error";
  readonly code: Http1ErrorCode;

  constructor(message: string, code: Http1ErrorCode, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

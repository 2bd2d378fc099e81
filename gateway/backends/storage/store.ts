/** The contract between the storage backend and its two stores (local files, S3). */
import { GatewayError } from "../../errors.ts";

/** What is known of a stored object. */
export interface ObjectInfo {
  size: number;
  /** The Content-Type it was stored with; null when unknown. */
  contentType: string | null;
  /** Hex SHA-256 of the content, when recorded. */
  sha256?: string;
  /** Entity tag (quoted), when the store has one. */
  etag?: string;
  modified?: Date;
}

/** A stored object being read. */
export interface ObjectRead {
  info: ObjectInfo;
  body: ReadableStream<Uint8Array>;
}

/** The raw body of a write: a stream, bytes, or nothing (an empty object). */
export type WriteSource = ReadableStream<Uint8Array> | Uint8Array | null;

/** How to write. */
export interface WriteOptions {
  contentType: string;
  /** False for POST: fail with 409 `object_exists` instead of replacing. */
  overwrite: boolean;
  signal: AbortSignal;
  /** The declared length of the body, when known (chooses single or multipart on S3). */
  length: number | null;
}

/** The outcome of a write. */
export interface WriteResult {
  size: number;
  sha256: string;
  /** False when an existing object was replaced. */
  created: boolean;
}

/** A place objects live, addressed by checked relative paths. */
export interface ObjectStore {
  /** For logs: `file:///srv/data` or `s3://bucket/prefix`. */
  readonly description: string;
  /** Metadata of the object at `path`, or null when there is none. */
  head(path: string, signal: AbortSignal): Promise<ObjectInfo | null>;
  /** Open the object at `path` for streaming, or null when there is none. */
  read(path: string, signal: AbortSignal): Promise<ObjectRead | null>;
  /** Store `source` at `path`: all of it or nothing. */
  write(path: string, source: WriteSource, options: WriteOptions): Promise<WriteResult>;
  /** Remove the object at `path`; false when there was none. */
  remove(path: string, signal: AbortSignal): Promise<boolean>;
  /** Release clients and sockets. */
  close(): void | Promise<void>;
}

/** 409 `object_exists` for a POST onto an existing object. */
export function objectExists(path: string): GatewayError {
  return new GatewayError(
    409,
    "object_exists",
    `an object already exists at "${path}"; POST never overwrites (use PUT to replace it)`,
  );
}

/**
 * The error for an aborted call: 504 `backend_timeout` when the backend timeout fired, else
 * 499 `client_closed` (the client went away).
 */
export function abortedError(signal: AbortSignal, backend: string, timeoutSecs: number) {
  const reason = signal.reason;
  if (reason instanceof DOMException && reason.name === "TimeoutError") {
    return new GatewayError(
      504,
      "backend_timeout",
      `backend ${backend} did not finish within ${timeoutSecs} s`,
    );
  }
  return new GatewayError(499, "client_closed", "client closed the request");
}

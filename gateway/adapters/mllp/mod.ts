/**
 * MLLP, the Minimal Lower Layer Protocol HL7 v2 messages travel in over TCP: frames of
 * `<VT>` payload `<FS><CR>`, split from a byte stream by a linear reader with a size limit; the
 * listener serves each connection one message at a time, with idle and size limits.
 *
 * @example
 * ```ts
 * import { encodeMllpFrame, MllpFrameReader } from "./mod.ts";
 *
 * const frame = encodeMllpFrame(new TextEncoder().encode("MSH|^~\\&|A|B\r"));
 * const reader = new MllpFrameReader({ maxFrameBytes: 1024 });
 * // A frame split across reads comes out whole, once.
 * console.log(reader.push(frame.subarray(0, 5)).length); // 0
 * const [payload] = reader.push(frame.subarray(5));
 * console.log(new TextDecoder().decode(payload).startsWith("MSH|")); // true
 * ```
 *
 * @module
 */
export {
  encodeMllpFrame,
  MLLP_END,
  MLLP_END_CR,
  MLLP_HEAD_BYTES,
  MLLP_START,
  MllpFrameError,
  type MllpFrameErrorCode,
  MllpFrameReader,
  type MllpFrameReaderOptions,
} from "./frame.ts";
export {
  type MllpCloseReason,
  MllpConnection,
  type MllpConnectionOptions,
  type MllpHandler,
} from "./connection.ts";
export { MllpListener, type MllpListenOptions, type MllpTlsServer } from "./server.ts";

/** The `echo` backend: answers with the request envelope as JSON, calling nothing. */
import type { BackendConfig } from "../../shared/gateway_config/mod.ts";
import {
  Body,
  headersToObject,
  queryToObject,
  type RequestEnvelope,
  ResponseEnvelope,
} from "../envelope.ts";
import type { Backend } from "../pipeline/mod.ts";

const ENCODER = new TextEncoder();

/** Returns method, path, headers, query, metadata, content info and data of the request. */
export class EchoBackend implements Backend {
  readonly name: string;
  readonly config: BackendConfig;

  constructor(config: BackendConfig) {
    this.name = config.name;
    this.config = config;
  }

  /**
   * Echo the envelope. The answer to a DIMSE operation is built when it is first read: the
   * dicom_scp endpoint reads only the status of a C-STORE's answer, and building it hashes the
   * instance and parses its header (about 0.45 ms per 525 KB CT image, more than receiving it).
   */
  async invoke(req: RequestEnvelope): Promise<ResponseEnvelope> {
    const res = req.protocol === "dimse"
      ? ResponseEnvelope.fromFields(200, ["content-type", "application/json"], onRead(req))
      : ResponseEnvelope.json(200, await answer(req));
    res.backend = this.name;
    return res;
  }

  /** Nothing to release. */
  close(): void {}
}

/** The echo of `req`. */
async function answer(req: RequestEnvelope): Promise<unknown> {
  const data = await req.body.data();
  const content = await req.body.info(!req.body.isEmpty);
  return {
    request_id: req.id,
    protocol: req.protocol,
    method: req.method,
    path: req.path,
    endpoint: req.endpoint,
    pipeline: req.pipeline,
    headers: headersToObject(req.readHeaders),
    query: queryToObject(req.query),
    metadata: req.metadata,
    content,
    data: data ?? null,
  };
}

/** A JSON body of the echo of `req`, made when the body is first read (never, if it is not). */
function onRead(req: RequestEnvelope): Body {
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      controller.enqueue(ENCODER.encode(JSON.stringify(await answer(req))));
      controller.close();
    },
    // highWaterMark 0: nothing is pulled before a reader asks.
  }, { highWaterMark: 0 });
  // Not limited (a local answer): forwardable() hands out the stream itself, not a pipe through a
  // limit that would start reading it.
  return new Body(stream, "application/json", undefined, null, false);
}

/** Build an `echo` backend. */
export function createEchoBackend(config: BackendConfig): Backend {
  return new EchoBackend(config);
}

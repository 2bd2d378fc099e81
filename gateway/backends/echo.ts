/** The `echo` backend: answers with the request envelope as JSON, calling nothing. */
import type { BackendConfig } from "../../shared/gateway_config/mod.ts";
import {
  headersToObject,
  queryToObject,
  type RequestEnvelope,
  ResponseEnvelope,
} from "../envelope.ts";
import type { Backend } from "../pipeline/mod.ts";

/** Returns method, path, headers, query, metadata, content info and data of the request. */
export class EchoBackend implements Backend {
  readonly name: string;
  readonly config: BackendConfig;

  constructor(config: BackendConfig) {
    this.name = config.name;
    this.config = config;
  }

  /** Echo the envelope. */
  async invoke(req: RequestEnvelope): Promise<ResponseEnvelope> {
    const data = await req.body.data();
    const content = await req.body.info(!req.body.isEmpty);
    const res = ResponseEnvelope.json(200, {
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
    });
    res.backend = this.name;
    return res;
  }

  /** Nothing to release. */
  close(): void {}
}

/** Build an `echo` backend. */
export function createEchoBackend(config: BackendConfig): Backend {
  return new EchoBackend(config);
}

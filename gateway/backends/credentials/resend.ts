/** A backend call with credentials: sent with them, and once more with new ones after a 401. */
import type { Logger } from "../../../shared/mod.ts";
import type { RequestEnvelope, ResponseEnvelope } from "../../envelope.ts";
import { IDEMPOTENT } from "../failover.ts";
import type { HeaderField, UpstreamCredentials } from "./types.ts";

/**
 * Calls `send` with the credentials' fields (or with none when the backend has no credentials).
 * When the upstream answers 401, the credentials are dropped and, for an idempotent request whose
 * body can be sent again, `send` runs once more with new ones (a token revoked or expired early);
 * any other answer is returned as it is.
 */
export function sendWithCredentials(
  credentials: UpstreamCredentials | undefined,
  req: RequestEnvelope,
  call: { signal: AbortSignal; logger: Logger },
  backend: string,
  send: (fields: readonly HeaderField[] | undefined) => Promise<ResponseEnvelope>,
): Promise<ResponseEnvelope> {
  if (!credentials) return send(undefined);
  return resend(credentials, req, call, backend, send);
}

async function resend(
  credentials: UpstreamCredentials,
  req: RequestEnvelope,
  call: { signal: AbortSignal; logger: Logger },
  backend: string,
  send: (fields: readonly HeaderField[]) => Promise<ResponseEnvelope>,
): Promise<ResponseEnvelope> {
  const resendable = IDEMPOTENT.has(req.method) && (!req.body.streaming || req.body.replayable);
  let used = await credentials.fields(call.signal);
  const res = await send(used);
  if (res.status !== 401 || !credentials.rejected(used) || !resendable) return res;
  const unread = res.body.forwardable();
  if (unread instanceof ReadableStream) await unread.cancel().catch(() => {});
  call.logger.info("the upstream refused the backend's credentials; sending again with new ones", {
    backend,
  });
  used = await credentials.fields(call.signal);
  return await send(used);
}

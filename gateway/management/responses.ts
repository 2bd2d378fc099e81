/** JSON error responses of the management API, in the gateway's one error shape. */
import type { Context } from "hono";
import { errorBody, GatewayError } from "../errors.ts";
import type { ManagementEnv } from "./request_context.ts";

/** A JSON error response `{"error":{code,message,request_id}}` with extra headers. */
export function errorResponse(
  c: Context<ManagementEnv>,
  err: GatewayError,
  headers: Record<string, string> = {},
): Response {
  return new Response(errorBody(err, c.get("requestId") ?? ""), {
    status: err.status,
    headers: { "Content-Type": "application/json", ...headers },
  });
}

/** Shorthand: an error response built from status, code and message. */
export function fail(
  c: Context<ManagementEnv>,
  status: number,
  code: string,
  message: string,
  headers?: Record<string, string>,
): Response {
  return errorResponse(c, new GatewayError(status, code, message), headers);
}

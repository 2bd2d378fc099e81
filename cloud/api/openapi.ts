/** The OpenAPI 3.1 document, built from the route registry (so every route is in it). */
import { z } from "zod";
import type { Services } from "../services.ts";
import { openApiPath, type Registry, type ResponseDoc, type RouteDoc } from "./registry.ts";

const ERROR_SCHEMA = {
  type: "object",
  required: ["error"],
  properties: {
    error: {
      type: "object",
      required: ["code", "message"],
      properties: {
        code: { type: "string", description: "Stable, machine-readable code." },
        message: { type: "string", description: "What went wrong and how to fix it." },
        fields: {
          type: "array",
          description: "Field-level problems of the body or query (validation_failed).",
          items: {
            type: "object",
            properties: { field: { type: "string" }, message: { type: "string" } },
          },
        },
        used_by: {
          type: "array",
          description: "409 resource_in_use: the resources that still refer to this one.",
          items: {
            type: "object",
            required: ["kind", "id"],
            properties: { kind: { type: "string" }, id: { type: "string" } },
          },
        },
        problems: {
          type: "array",
          description: "Problems of a gateway configuration (file, line and key when known).",
          items: {
            type: "object",
            required: ["message"],
            properties: {
              file: { type: "string" },
              line: { type: "integer" },
              path: { type: "string" },
              message: { type: "string" },
            },
          },
        },
        budget_steps: {
          type: "integer",
          description: "422 transform_budget_exceeded: the work steps one JOLT run may take.",
        },
        deadline_ms: {
          type: "integer",
          description: "422 preview_deadline_exceeded: how long one JOLT preview may run.",
        },
        retry_after_s: {
          type: "integer",
          description: "503 preview_busy: seconds to wait before trying again.",
        },
        request_id: { type: "string" },
      },
    },
  },
};

const SECURITY: Record<string, string> = {
  api_token: "apiToken",
  user_token: "userToken",
  machine: "machineToken",
};

function bodySchema(doc: RouteDoc): unknown {
  if (!doc.body?.schema) return { type: "string" };
  return z.toJSONSchema(doc.body.schema, { io: "input", unrepresentable: "any" });
}

/** An error body as the server writes it. */
function errorExample(code: string, message: string): unknown {
  return { error: { code, message, request_id: "7d0c3a9e-5b1f-4c2e-9f64-2b8a1d3e4f50" } };
}

/**
 * The error answers every route of a kind gives besides its own documented ones, as the shared
 * middleware and body reader write them: 401 and 429 from bearer authentication and the request
 * budgets, 400/413/415/422 from the JSON body reader, 404 for an `:id` that names nothing.
 */
function sharedErrors(doc: RouteDoc): Record<number, ResponseDoc> {
  const out: Record<number, ResponseDoc> = {};
  if (doc.path.startsWith("/oauth/")) return out;
  if (!doc.auth.includes("none")) {
    out[401] = {
      description: "No bearer token, or one that is malformed, expired, revoked or of the wrong " +
        "kind (`unauthorized`); `WWW-Authenticate: Bearer`.",
      headers: { "WWW-Authenticate": 'Bearer realm="gateway-cloud"' },
      example: errorExample("unauthorized", "missing bearer token"),
    };
    out[429] = {
      description: "The token's request budget (or, for bad tokens, the address's) is spent " +
        "(`rate_limited`); `Retry-After` says when to try again.",
      headers: { "Retry-After": "12" },
      example: errorExample("rate_limited", "too many requests: try again in 12 s"),
    };
  }
  if (doc.body && (doc.body.contentType ?? "application/json").includes("json")) {
    out[400] = {
      description: "The body is not valid JSON (`invalid_json`).",
      example: errorExample(
        "invalid_json",
        "the body is not valid JSON: Unexpected end of JSON input",
      ),
    };
    out[413] = {
      description: "The body is over the size limit (`payload_too_large`).",
      example: errorExample("payload_too_large", "the body is larger than 1048576 bytes"),
    };
    out[415] = {
      description: "The body is not sent as `application/json` (`unsupported_media_type`).",
      example: errorExample("unsupported_media_type", "send the body as application/json"),
    };
    if (doc.body.schema) {
      out[422] = {
        description: "A field is missing or invalid (`validation_failed`, one entry per field).",
        example: {
          error: {
            code: "validation_failed",
            message: "invalid body: name: required",
            fields: [{ field: "name", message: "required" }],
            request_id: "7d0c3a9e-5b1f-4c2e-9f64-2b8a1d3e4f50",
          },
        },
      };
    }
  }
  if (/:id\b/.test(doc.path)) {
    out[404] = {
      description: "Nothing with this id in the caller's team (`not_found`).",
      example: errorExample("not_found", "no such resource in your team"),
    };
  }
  return out;
}

function operation(doc: RouteDoc): Record<string, unknown> {
  const params = [
    ...[...doc.path.matchAll(/:([A-Za-z_]+)/g)].map((m) => ({
      name: m[1],
      in: "path",
      required: true,
      schema: { type: "string" },
    })),
    ...(doc.query ?? []).map((q) => ({
      name: q.name,
      in: "query",
      required: q.required ?? false,
      description: q.description,
      schema: { type: q.type },
    })),
    ...(doc.headers ?? []).map((h) => ({
      name: h.name,
      in: "header",
      required: h.required ?? false,
      description: h.description,
      schema: { type: h.type },
    })),
  ];
  const responses: Record<string, unknown> = {};
  // The route's own answers win over the shared ones of the same status.
  const all = { ...sharedErrors(doc), ...doc.responses };
  const ordered = Object.entries(all).sort(([a], [b]) => Number(a) - Number(b));
  for (const [status, r] of ordered) {
    const isError = Number(status) >= 400 && !doc.path.startsWith("/oauth/");
    const type = r.contentType ?? "application/json";
    responses[status] = {
      description: r.description,
      ...(r.headers
        ? {
          headers: Object.fromEntries(
            Object.entries(r.headers).map((
              [k, v],
            ) => [k, { schema: { type: "string" }, example: v }]),
          ),
        }
        : {}),
      ...(r.example !== undefined || isError
        ? {
          content: {
            [type]: {
              ...(isError ? { schema: { $ref: "#/components/schemas/Error" } } : {}),
              ...(r.example !== undefined ? { example: r.example } : {}),
            },
          },
        }
        : {}),
    };
  }
  return {
    operationId: `${doc.method}${
      doc.path.replace(/[^A-Za-z0-9]+(.)?/g, (_, ch) => (ch ?? "").toUpperCase())
    }`,
    tags: [doc.tag],
    summary: doc.summary,
    ...(doc.description ? { description: doc.description } : {}),
    security: doc.auth.includes("none") ? [] : doc.auth.map((a) => ({ [SECURITY[a]]: [] })),
    ...(params.length ? { parameters: params } : {}),
    ...(doc.body
      ? {
        requestBody: {
          required: true,
          ...(doc.body.description ? { description: doc.body.description } : {}),
          content: {
            [doc.body.contentType ?? "application/json"]: {
              schema: bodySchema(doc),
              example: doc.body.example,
            },
          },
        },
      }
      : {}),
    responses,
  };
}

/** The OpenAPI document of every registered route. */
export function openApiDocument(reg: Registry, s: Services): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const doc of reg.routes) {
    const path = openApiPath(doc.path);
    (paths[path] ??= {})[doc.method] = operation(doc);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Gateway cloud service API",
      version: "1.0.0",
      description:
        "Accounts and teams, device login, tokens, gateway authorization and configuration sync, and the team-scoped resources. See docs/cloud-api.md.",
    },
    servers: [{ url: s.options.baseUrl }],
    paths,
    components: {
      schemas: { Error: ERROR_SCHEMA },
      securitySchemes: {
        apiToken: {
          type: "http",
          scheme: "bearer",
          description: "An API token (`gwc_…`) created in the web UI.",
        },
        userToken: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "A user token (RS256 JWT) from the device login.",
        },
        machineToken: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "JWT",
          description: "A gateway's machine token from /api/gateway/authorize.",
        },
      },
    },
  };
}

/** Mounts `GET /api/openapi.json`. */
export function mountOpenApi(reg: Registry, s: Services): void {
  let cached: Record<string, unknown> | undefined;
  reg.add({
    method: "get",
    path: "/api/openapi.json",
    tag: "Discovery",
    summary: "This OpenAPI document",
    auth: ["none"],
    responses: {
      200: {
        description: "OpenAPI 3.1",
        example: { openapi: "3.1.0", info: { title: "Gateway cloud service API" } },
      },
    },
  }, (c) => c.json(cached ??= openApiDocument(reg, s)));
}

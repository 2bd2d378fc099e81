/** The OpenAPI 3.1 document, built from the route registry (so every route is in it). */
import { z } from "zod";
import type { Services } from "../services.ts";
import { openApiPath, type Registry, type RouteDoc } from "./registry.ts";

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
  for (const [status, r] of Object.entries(doc.responses)) {
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

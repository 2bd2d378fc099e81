/**
 * Every API route is declared once, with its documentation: the registry mounts the handlers on
 * the app and keeps the description that the OpenAPI document is built from, so a route cannot
 * exist without being documented.
 */
import { type Handler, Hono, type MiddlewareHandler } from "hono";
import type { z } from "zod";
import type { AppEnv } from "./env.ts";

/** HTTP methods of the API. */
export type Method = "get" | "post" | "put" | "patch" | "delete";

/** Credentials a route accepts. */
export type AuthKind = "api_token" | "user_token" | "machine" | "none";

/** A documented response. */
export interface ResponseDoc {
  description: string;
  contentType?: string;
  example?: unknown;
  headers?: Record<string, string>;
}

/** A documented query parameter. */
export interface QueryDoc {
  name: string;
  description: string;
  type: "string" | "integer" | "boolean";
  required?: boolean;
}

/** The documentation of one route. */
export interface RouteDoc {
  method: Method;
  /** Hono path, `:param` style. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  auth: AuthKind[];
  query?: QueryDoc[];
  headers?: QueryDoc[];
  body?: { schema?: z.ZodType; contentType?: string; example: unknown; description?: string };
  responses: Record<number, ResponseDoc>;
}

/** A route's handlers: middleware first, the handler that answers last. */
export type RouteHandlers = (MiddlewareHandler<AppEnv> | Handler<AppEnv>)[];

/**
 * One route: its documentation and its handlers, declared together in the small file that also
 * holds the handler (as Hono keeps each middleware in its own folder); a folder's `mod.ts` mounts
 * its routes in order with {@link RouteGroup.mount}.
 */
export interface Route {
  doc: RouteDoc;
  handlers: RouteHandlers;
}

/** Declares one route: its documentation, then its middleware and handler. */
export function route(doc: RouteDoc, ...handlers: RouteHandlers): Route {
  return { doc, handlers };
}

/** The routes of the app and their documentation. */
export class Registry {
  readonly routes: RouteDoc[] = [];
  #app: Hono<AppEnv>;

  constructor(app: Hono<AppEnv>) {
    this.#app = app;
  }

  /** Declares a route: documents it and mounts `handlers` on the app. */
  add(doc: RouteDoc, ...handlers: RouteHandlers): void {
    this.document(doc);
    this.#app.on(doc.method.toUpperCase(), doc.path, ...handlers as [Handler<AppEnv>]);
  }

  /** Mounts middleware on `path` (all methods), e.g. CORS for a group of documented routes. */
  use(path: string, handler: MiddlewareHandler<AppEnv>): void {
    this.#app.use(path, handler);
  }

  /** Records a route's documentation (a route is declared once). */
  document(doc: RouteDoc): void {
    if (this.routes.some((r) => r.method === doc.method && r.path === doc.path)) {
      throw new Error(`route ${doc.method.toUpperCase()} ${doc.path} declared twice`);
    }
    this.routes.push(doc);
  }

  /**
   * Declares the routes of a part of the API with `declare`, as a Hono sub-app mounted under
   * `prefix` once they are all declared.
   */
  group(prefix: string, declare: (group: RouteGroup) => void): void {
    const group = new RouteGroup(this, prefix);
    declare(group);
    this.#app.route(prefix, group.app);
  }
}

/** The routes of one part of the API, mounted as a Hono sub-app under a common prefix. */
export class RouteGroup {
  readonly #registry: Registry;
  readonly #prefix: string;
  readonly app = new Hono<AppEnv>();

  constructor(registry: Registry, prefix: string) {
    this.#registry = registry;
    this.#prefix = prefix;
  }

  /** Declares a route of the group: `doc.path` is the full path, under the group's prefix. */
  add(doc: RouteDoc, ...handlers: RouteHandlers): void {
    if (!doc.path.startsWith(this.#prefix)) {
      throw new Error(`route ${doc.path} is outside its group ${this.#prefix}`);
    }
    this.#registry.document(doc);
    const path = doc.path.slice(this.#prefix.length) || "/";
    this.app.on(doc.method.toUpperCase(), path, ...handlers as [Handler<AppEnv>]);
  }

  /** Declares `routes` in order (Hono tries routes in the order they were added). */
  mount(...routes: Route[]): void {
    for (const r of routes) this.add(r.doc, ...r.handlers);
  }
}

/** `/api/gateways/:id` -> `/api/gateways/{id}`. */
export function openApiPath(path: string): string {
  return path.replace(/:([A-Za-z_]+)/g, "{$1}");
}

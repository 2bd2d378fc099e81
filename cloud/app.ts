/** The Hono app of the cloud service: the API, the web UI, errors and 404s. */
import { Hono } from "hono";
import {
  ApiError,
  type AppEnv,
  errorResponse,
  handleApiError,
  mountApi,
  type Registry,
  requestContext,
} from "./api/mod.ts";
import type { Services } from "./services.ts";

/** The app and its route registry. */
export interface CloudApp {
  app: Hono<AppEnv>;
  registry: Registry;
}

/** Builds the app over `s`. */
export function createApp(s: Services): CloudApp {
  const app = new Hono<AppEnv>();
  app.use("*", requestContext(s));
  const registry = mountApi(app, s);
  app.notFound((c) =>
    errorResponse(c, new ApiError(404, "not_found", `no route for ${c.req.method} ${c.req.path}`))
  );
  app.onError((err, c) => handleApiError(err, c));
  return { app, registry };
}

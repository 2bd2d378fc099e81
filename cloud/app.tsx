/** @jsxImportSource hono/jsx */
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
import { mountMcp } from "./mcp/mod.ts";
import type { Services } from "./services.ts";
import { createUi, Layout } from "./ui/mod.ts";

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
  // MCP over Streamable HTTP (POST/GET/DELETE /mcp/cloud); outside the REST registry and OpenAPI.
  mountMcp(app, s);
  app.route("/", createUi(s));
  app.notFound((c) => {
    const browser = (c.req.header("accept") ?? "").includes("text/html") &&
      !c.req.path.startsWith("/api/");
    if (browser) {
      return c.html(
        <Layout title="Not found">
          <div class="card narrow">
            <h1>Not found</h1>
            <p>
              There is no page at {c.req.path}. <a href="/">Home</a>
            </p>
          </div>
        </Layout>,
        404,
      );
    }
    return errorResponse(
      c,
      new ApiError(404, "not_found", `no route for ${c.req.method} ${c.req.path}`),
    );
  });
  app.onError((err, c) => handleApiError(err, c));
  return { app, registry };
}

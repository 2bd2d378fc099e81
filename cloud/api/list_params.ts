/** The query parameters every list route shares: `limit`, `cursor`, and enumerated filters. */
import type { Context } from "hono";
import type { AppEnv } from "./env.ts";
import { ApiError } from "./errors.ts";
import type { QueryDoc } from "./registry.ts";

/** Most records in one page. */
export const MAX_PAGE = 1000;
/** Records in a page when `limit` is not given. */
export const DEFAULT_PAGE = 100;

/** The documentation of `limit` and `cursor`. */
export const PAGE_QUERY: QueryDoc[] = [
  {
    name: "limit",
    type: "integer",
    description: `Records per page, 1-${MAX_PAGE} (default ${DEFAULT_PAGE}).`,
  },
  { name: "cursor", type: "string", description: "The `next_cursor` of the previous page." },
];

/** `limit` and `cursor` of a list request. */
export function pageParams(c: Context<AppEnv>): { limit: number; cursor?: string } {
  const limitText = c.req.query("limit");
  const limit = limitText === undefined ? DEFAULT_PAGE : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new ApiError(422, "validation_failed", `limit: an integer 1-${MAX_PAGE}`, {
      fields: [{ field: "limit", message: `an integer 1-${MAX_PAGE}` }],
    });
  }
  return { limit, cursor: c.req.query("cursor") || undefined };
}

/** The query parameter `name` if it is one of `values`; absent or empty: undefined; else 422. */
export function oneOf<T extends string>(
  c: Context<AppEnv>,
  name: string,
  values: readonly T[],
): T | undefined {
  const value = c.req.query(name);
  if (!value) return undefined;
  if (!(values as readonly string[]).includes(value)) {
    const message = `one of ${values.join(", ")}`;
    throw new ApiError(422, "validation_failed", `${name}: ${message}`, {
      fields: [{ field: name, message }],
    });
  }
  return value as T;
}

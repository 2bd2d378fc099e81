/** Middleware types and their factories. */
import type { MiddlewareFactory } from "../pipeline/types.ts";

/** Factories by middleware `type`; a type missing here is refused at config load. */
export const MIDDLEWARE_FACTORIES: Partial<Record<string, MiddlewareFactory>> = {};

/** The HTTP/3 backend's connection pool. */
export * from "./pool.ts";

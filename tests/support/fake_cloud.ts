/** A `fetch` that answers like the cloud service from a table of routes (unit tests, no sockets). */

/** A handler of one `METHOD /path` (query ignored). */
export type FakeRoute = (req: Request) => Response | Promise<Response>;

/** A fetch over `routes`; unknown routes answer 404; `calls` records `METHOD /path`. */
export function fakeCloudFetch(routes: Record<string, FakeRoute>): {
  fetch: typeof fetch;
  calls: string[];
} {
  const calls: string[] = [];
  const fetchImpl = (async (input: RequestInfo | URL, init?: RequestInit) => {
    const req = new Request(input, init);
    const url = new URL(req.url);
    const key = `${req.method} ${url.pathname}`;
    calls.push(key);
    const route = routes[key];
    if (!route) {
      return Response.json({ error: { code: "not_found", message: "no route" } }, { status: 404 });
    }
    return await route(req);
  }) as typeof fetch;
  return { fetch: fetchImpl, calls };
}

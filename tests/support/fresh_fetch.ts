/** A request on a connection of its own (the kernel picks the listener of a shared port anew). */

/** What `fetchFresh` read. */
export interface FreshResponse {
  status: number;
  headers: Headers;
  text: string;
}

/** Sends one request on a new TCP connection, reads the answer whole, closes the connection. */
export async function fetchFresh(url: string, init: RequestInit = {}): Promise<FreshResponse> {
  const client = Deno.createHttpClient({});
  try {
    const res = await fetch(url, { ...init, client });
    return { status: res.status, headers: res.headers, text: await res.text() };
  } finally {
    client.close();
  }
}

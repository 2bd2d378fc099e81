/** Header rules of a forwarding proxy (RFC 9110 §7.6.1 hop-by-hop fields, X-Forwarded-*). */

const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);

/** A copy of `headers` without hop-by-hop fields (also those named in `Connection`). */
export function withoutHopByHop(headers: Headers): Headers {
  const out = new Headers(headers);
  const named = headers.get("connection");
  if (named) {
    for (const n of named.split(",")) out.delete(n.trim());
  }
  for (const h of HOP_BY_HOP) out.delete(h);
  return out;
}

/** Headers to send upstream: hop-by-hop removed, Host dropped, X-Forwarded-* added. */
export function upstreamHeaders(
  headers: Headers,
  client: { remoteAddr?: string; scheme: string; host: string },
): Headers {
  const out = withoutHopByHop(headers);
  out.delete("host");
  // fetch computes the length of what it really sends (the body may have been re-encoded).
  out.delete("content-length");
  if (client.remoteAddr) {
    const prior = out.get("x-forwarded-for");
    out.set("x-forwarded-for", prior ? `${prior}, ${client.remoteAddr}` : client.remoteAddr);
  }
  if (!out.has("x-forwarded-proto")) out.set("x-forwarded-proto", client.scheme);
  if (!out.has("x-forwarded-host") && client.host) out.set("x-forwarded-host", client.host);
  return out;
}

/**
 * The upstream request fields as a `forEach` view over the client's headers: hop-by-hop fields,
 * Host and Content-Length skipped, X-Forwarded-* added, without copying into a new Headers
 * (that copy was a tenth of a proxied request's CPU time). `streamLength` is the declared length
 * of a streamed body, sent as its Content-Length.
 */
export function forwardedHeaderView(
  headers: Headers,
  client: { remoteAddr?: string; scheme: string; host: string },
  contentType: string | null,
  streamLength: number | null = null,
  credentials?: readonly (readonly [string, string])[],
): { forEach(callback: (value: string, name: string) => void): void } {
  return {
    forEach(callback) {
      const named = headers.get("connection");
      let skip = named ? new Set(named.split(",").map((n) => n.trim().toLowerCase())) : undefined;
      // The backend's own credentials replace whatever the client sent under their names.
      if (credentials) {
        skip ??= new Set();
        for (const [name] of credentials) skip.add(name);
      }
      let xff: string | undefined;
      let proto = false;
      let fwdHost = false;
      headers.forEach((value, name) => {
        if (HOP_BY_HOP.has(name) || skip?.has(name)) return;
        switch (name) {
          case "host":
          case "content-length":
            return;
          case "content-type":
            if (contentType !== null) return;
            break;
          case "x-forwarded-for":
            xff = value;
            return;
          case "x-forwarded-proto":
            proto = true;
            break;
          case "x-forwarded-host":
            fwdHost = true;
            break;
        }
        callback(value, name);
      });
      if (contentType !== null) callback(contentType, "content-type");
      if (streamLength !== null) callback(String(streamLength), "content-length");
      if (client.remoteAddr) {
        callback(xff ? `${xff}, ${client.remoteAddr}` : client.remoteAddr, "x-forwarded-for");
      } else if (xff) callback(xff, "x-forwarded-for");
      if (!proto) callback(client.scheme, "x-forwarded-proto");
      if (!fwdHost && client.host) callback(client.host, "x-forwarded-host");
      if (credentials) { for (const [name, value] of credentials) callback(value, name); }
    },
  };
}

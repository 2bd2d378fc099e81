/**
 * The path and method a server behind the gateway will act on, for middleware that decide by
 * them (`request_filter`, SMART scopes). A request path reaches the gateway percent-encoded and
 * is forwarded as it came; the server decodes it. Deciding on the encoded form lets
 * `/Observation/%24everything` pass as a read while the server runs `$everything`, so decisions
 * are made on the decoded segments, and a path whose decoded form a server could read in more
 * than one way (an encoded `/` or `\`, a `.` or `..` segment, an empty segment, a `;` path
 * parameter that Java servers strip, a control character) is refused rather than guessed at.
 * Method overrides (`X-HTTP-Method-Override` and its kin, `_method`) that some frameworks honour
 * are refused when they name another method, since the decision was made on the real one.
 */
import type { RequestEnvelope } from "../envelope.ts";
import { GatewayError } from "../errors.ts";

/** A path decoded into the segments a server will act on, or why it cannot be decided on. */
export type DecidedPath =
  | { segments: string[]; path: string; problem?: undefined }
  | { problem: string; segments?: undefined; path?: undefined };

/** Headers some frameworks (and some FHIR servers behind proxies) read as the real method. */
export const METHOD_OVERRIDE_HEADERS = [
  "x-http-method-override",
  "x-http-method",
  "x-method-override",
] as const;

/**
 * The decoded segments of `rawPath` (a path below the endpoint prefix, as received), and the
 * normalized path they make; a trailing `/` is dropped. `problem` names what makes the path
 * ambiguous instead.
 */
export function decidePath(rawPath: string): DecidedPath {
  const parts = rawPath.split("/");
  // "/a/b" splits into ["", "a", "b"]; "/a/b/" ends with one more empty part.
  const last = parts.length - 1;
  const segments: string[] = [];
  for (let i = 0; i <= last; i++) {
    const raw = parts[i];
    if (raw === "") {
      if (i === 0 || i === last) continue;
      return { problem: "an empty path segment (//)" };
    }
    if (raw.includes(";")) return { problem: "a ; in a path segment (a path parameter)" };
    let segment: string;
    try {
      segment = raw.includes("%") ? decodeURIComponent(raw) : raw;
    } catch {
      return { problem: "malformed percent-encoding in the path" };
    }
    if (segment.includes("/") || segment.includes("\\")) {
      return { problem: "an encoded / or \\ inside a path segment" };
    }
    if (segment === "." || segment === "..") return { problem: "a . or .. path segment" };
    // deno-lint-ignore no-control-regex
    if (/[\x00-\x1f\x7f]/.test(segment)) return { problem: "a control character in the path" };
    segments.push(segment);
  }
  return { segments, path: "/" + segments.join("/") };
}

/** A 400 `ambiguous_path`: the path cannot be decided on as the server will read it. */
export function ambiguousPath(problem: string): GatewayError {
  return new GatewayError(
    400,
    "ambiguous_path",
    `the path cannot be checked as the server will read it: ${problem}`,
  );
}

/** The decided path of a request, or a 400 `ambiguous_path`. */
export function decidedPathOf(req: RequestEnvelope): { segments: string[]; path: string } {
  const decided = decidePath(req.path.startsWith("/") ? req.path : `/${req.path}`);
  if (decided.problem !== undefined) throw ambiguousPath(decided.problem);
  return decided;
}

/**
 * Throws a 400 `method_override_refused` when the request asks, by header or `_method`, to be
 * treated as another method than the one it was checked as.
 */
export function refuseMethodOverride(req: RequestEnvelope): void {
  const method = req.method.toUpperCase();
  const headers = req.readHeaders;
  for (const name of METHOD_OVERRIDE_HEADERS) {
    const value = headers.get(name);
    if (value !== null && value.trim().toUpperCase() !== method) {
      throw overrideRefused(`the ${name} header`, value, method);
    }
  }
  // Parsed only when the raw query could name `_method` (its letters may be percent-encoded).
  const raw = req.queryString();
  if (raw !== "" && (/method/i.test(raw) || raw.includes("%"))) {
    for (const value of req.query.getAll("_method")) {
      if (value.trim().toUpperCase() !== method) throw overrideRefused("_method", value, method);
    }
  }
}

function overrideRefused(where: string, value: string, method: string): GatewayError {
  const shown = value.length > 16 ? `${value.slice(0, 16)}…` : value;
  return new GatewayError(
    400,
    "method_override_refused",
    `${where} asks for ${JSON.stringify(shown)} on a ${method} request: method overrides are ` +
      "refused where the method is checked; send the real method",
  );
}

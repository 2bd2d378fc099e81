/** Value schemas (zod) shared by the configuration tables: ports, URLs, AE titles, prefixes. */
import { z } from "zod";
import { rangeProblem } from "../net/mod.ts";

/** A non-empty string. */
export const text = () => z.string().min(1);
/** An integer in [min, max]. */
export const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.int().min(min).max(max);
/** A TCP/UDP port, 1-65535. */
export const port = () => int(1, 65_535);
/** A number greater than 0. */
export const positive = () => z.number().positive();
/** A list of names of other entries. */
export const names = () => z.array(text());

/** An IPv4 or IPv6 address, or a CIDR range. */
export const addressRange = () =>
  z.string().refine((v) => rangeProblem(v) === null, {
    message: "an IPv4 or IPv6 address, or a CIDR range such as 10.0.0.0/8 or fd00::/8",
  });

function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === "http:" || url.protocol === "https:") && url.hostname !== "";
  } catch {
    return false;
  }
}

/** An http:// or https:// URL with a host. */
export const httpUrl = () => text().refine(isHttpUrl, "must be an http:// or https:// URL");
/** A DNS host name (letters, digits, hyphens, dots). */
export const hostName = () =>
  text().max(253).regex(
    /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/,
    "a DNS host name",
  );

/** A URL path starting with `/`. */
export const absolutePath = () => text().refine((v) => v.startsWith("/"), "must start with `/`");

/** A DICOM application entity title: 1-16 characters. */
export const aeTitle = () =>
  z.string().min(1).max(16)
    .refine(
      // DICOM AE titles exclude backslash and control characters (PS3.5 6.2, VR "AE").
      // deno-lint-ignore no-control-regex
      (v) => !/[\\\x00-\x1f\x7f]/.test(v),
      "must not contain a backslash or control characters",
    )
    .refine((v) => v === "" || v.trim() !== "", "must not be all spaces");

/** `path_prefix` as routed: starts with `/`, no trailing slash except for `/` itself. */
export function normalizePathPrefix(prefix: string): string {
  let p = prefix;
  while (p.length > 1 && p.endsWith("/")) p = p.slice(0, -1);
  return p;
}

/** Characters of a URL path (RFC 3986 pchar and `/`). */
const URL_PATH = /^\/[A-Za-z0-9\-._~!$&'()*+,;=:@%/]*$/;
/** An endpoint `path_prefix`, normalized on the way through. */
export const pathPrefix = () =>
  text()
    .refine((v) => v.startsWith("/"), "must start with `/`")
    .refine((v) => !v.startsWith("/") || URL_PATH.test(v), "must hold only URL path characters")
    .refine(
      (v) => !normalizePathPrefix(v).includes("//"),
      "must not contain an empty segment (`//`)",
    )
    .refine((v) => !/(^|\/)\.\.?(\/|$)/.test(v), "must not contain `.` or `..` segments")
    .transform(normalizePathPrefix);

/** `s3://<bucket>[/<prefix>]` with an S3-style bucket name. */
export const S3_ROOT = /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/;

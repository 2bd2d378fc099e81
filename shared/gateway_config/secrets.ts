/**
 * Credentials in configuration text: values of fields the schema marks `secret`, and credentials
 * inside URLs in any string (userinfo, secret-looking query parameters; see url_credentials.ts).
 * Found, redacted before the gateway uploads its files, and refused by the cloud when written
 * literally. A value that is only an environment reference (`${S3_SECRET}`) is not a secret and
 * stays.
 *
 * @example
 * ```ts
 * import { redactSecrets } from "./secrets.ts";
 * const text = '[backends.a]\nservice = "storage"\n[backends.a.options]\nsecret_access_key = "abc"\n';
 * redactSecrets(text); // ... secret_access_key = "<redacted>"
 * ```
 */
import { parse } from "smol-toml";
import { visitFields } from "./field_walk.ts";
import { scanToml, type StringKind } from "./scan.ts";
import { isSecretReference, REDACTED } from "./secret_reference.ts";
import { inspectUrlCredentials, type UrlCredential } from "./url_credentials.ts";

export { isSecretReference, REDACTED };

/** One value replaced by {@link redactConfigText}. */
export interface Redaction {
  /** Key path of the value (array items as `key[0]`). */
  path: string;
  /** `secret`: a field the schema marks secret; `url`: credentials inside a URL. */
  reason: "secret" | "url";
  /** For `url`: what was found (names only). */
  found?: UrlCredential[];
}

/** Key paths (`backends.a.options.secret_access_key`) of the literal secrets of a parsed doc. */
export function literalSecretPaths(doc: Record<string, unknown>): string[] {
  const paths: string[] = [];
  visitFields(doc, (f) => {
    if (f.spec.secret && typeof f.value === "string" && !isSecretReference(f.value)) {
      paths.push(f.path);
    }
  });
  return paths;
}

/**
 * `text` with every literal secret value replaced by `<redacted>` and the credentials of every
 * URL in any other string value redacted; everything else (comments, layout, `${VAR}` references)
 * unchanged. Text that does not parse is redacted too: every string under a secret-looking key,
 * and URL credentials everywhere, so nothing leaks from a broken file either.
 */
export function redactConfigText(text: string): { text: string; redactions: Redaction[] } {
  let secret: (path: string) => boolean;
  try {
    const paths = new Set(literalSecretPaths(parse(text) as Record<string, unknown>));
    secret = (path) => paths.has(path);
  } catch {
    secret = (path) => /(secret|password|token|private|_key)$/i.test(path.split(".").at(-1) ?? "");
  }
  const redactions: Redaction[] = [];
  let out = "";
  let copied = 0;
  for (const span of scanToml(text).strings) {
    const raw = text.slice(span.start, span.end);
    let replacement: string;
    if (secret(span.path)) {
      if (isSecretReference(raw)) continue;
      replacement = REDACTED;
      redactions.push({ path: span.path, reason: "secret" });
    } else {
      const url = redactUrlsInString(raw, span.kind);
      if (!url) continue;
      replacement = url.text;
      redactions.push({ path: span.path, reason: "url", found: url.found });
    }
    out += text.slice(copied, span.start) + replacement;
    copied = span.end;
  }
  return { text: out + text.slice(copied), redactions };
}

/** {@link redactConfigText}'s text only. */
export function redactSecrets(text: string): string {
  return redactConfigText(text).text;
}

/** The raw content of a TOML string with its URL credentials redacted; null when it has none. */
function redactUrlsInString(
  raw: string,
  kind: StringKind,
): { text: string; found: UrlCredential[] } | null {
  // A newline right after an opening `"""` or `'''` is not part of the value.
  const lead = kind.startsWith("ml_") ? /^\r?\n/.exec(raw)?.[0] ?? "" : "";
  const body = raw.slice(lead.length);
  const asWritten = () => {
    const { found, redacted } = inspectUrlCredentials(body);
    return found.length ? { text: lead + redacted, found } : null;
  };
  if (!((kind === "basic" || kind === "ml_basic") && body.includes("\\"))) return asWritten();
  // Escapes may hide URL syntax (`\u0040` is `@`): decode, redact, and write it escaped again.
  const quote = kind === "basic" ? '"' : '"""';
  let value: string;
  try {
    value = (parse(`v = ${quote}${body}${quote}`) as { v: string }).v;
  } catch {
    return asWritten(); // a broken escape: redact what is written
  }
  const { found, redacted } = inspectUrlCredentials(value);
  if (!found.length) return null;
  // JSON escapes are TOML basic-string escapes; TOML also wants DEL escaped.
  const text = JSON.stringify(redacted).slice(1, -1).replaceAll("\x7f", "\\u007F");
  return { text: lead + text, found };
}

/**
 * OAuth 2.0 client credentials grant (RFC 6749 §4.4) for a backend: the client authenticates with
 * its secret (`client_secret_basic`, `client_secret_post`) or with a JWT assertion signed by its
 * private key (`private_key_jwt`, RFC 7523: SMART Backend Services). The access token is kept until
 * shortly before it expires and fetched once for any number of requests waiting for it; a 401 from
 * the upstream drops it.
 */
import { importJWK, importPKCS8, type JWK, SignJWT } from "jose";
import { type Clock, systemClock, timeoutSignal } from "../../../shared/mod.ts";
import { GatewayError } from "../../errors.ts";
import type { HeaderField, UpstreamCredentials } from "./types.ts";
import { basicAuthorization } from "./static.ts";

/** The `auth` options this grant reads. */
export interface ClientCredentialsOptions {
  backend: string;
  token_url: string;
  client_id: string;
  client_auth: "client_secret_basic" | "client_secret_post" | "private_key_jwt";
  client_secret?: string;
  scopes: string[];
  audience?: string;
  resource?: string;
  timeout_secs: number;
  /** `private_key_jwt`: the key and how to name it. */
  signer?: { key: CryptoKey | Uint8Array; alg: string; kid?: string };
  /** The HTTP client for the token endpoint (a private CA); default: fetch's own. */
  client?: Deno.HttpClient;
  /** Time of the renewal point, the failure hold and the token endpoint's timeout (tests). */
  clock?: Clock;
}

/** The largest token response read. */
const MAX_RESPONSE_BYTES = 64 * 1024;
/** A failed fetch is not repeated for this long (requests meanwhile fail at once). */
const FAILURE_HOLD_MS = 1000;
/** Lifetime assumed when the token endpoint gives no `expires_in`. */
const DEFAULT_LIFETIME_S = 300;

/** Reads a signing key from a PKCS#8 PEM file's text or a JWK (JSON) file's text. */
export async function importSigningKey(
  text: string,
  alg: string,
): Promise<{ key: CryptoKey | Uint8Array; kid?: string }> {
  const trimmed = text.trim();
  if (trimmed.startsWith("{")) {
    const jwk = JSON.parse(trimmed) as JWK;
    if (!jwk.d) throw new Error("the JWK is a public key; private_key_jwt needs the private key");
    return { key: await importJWK(jwk, alg), kid: jwk.kid };
  }
  return { key: await importPKCS8(trimmed, alg) };
}

/** The token of a client credentials grant, cached and refreshed. */
export class ClientCredentials implements UpstreamCredentials {
  readonly #o: ClientCredentialsOptions;
  #token: { value: string; refreshAt: number } | undefined;
  #fetching: Promise<string> | undefined;
  #failed: { error: GatewayError; until: number } | undefined;
  readonly #clock: Clock;

  constructor(options: ClientCredentialsOptions) {
    this.#o = options;
    this.#clock = options.clock ?? systemClock;
  }

  fields(signal: AbortSignal): readonly HeaderField[] | Promise<readonly HeaderField[]> {
    const token = this.#token;
    const now = this.#clock.now();
    if (token && now < token.refreshAt) return bearer(token.value);
    if (this.#failed && now < this.#failed.until) throw this.#failed.error;
    this.#fetching ??= this.#fetch().finally(() => this.#fetching = undefined);
    const fetching = this.#fetching;
    // A request that goes away stops waiting; the fetch goes on for the others.
    return new Promise<readonly HeaderField[]>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      signal.addEventListener("abort", onAbort, { once: true });
      fetching.then((value) => resolve(bearer(value)), reject)
        .finally(() => signal.removeEventListener("abort", onAbort));
    });
  }

  rejected(used: readonly HeaderField[]): boolean {
    if (this.#token && used[0]?.[1] === `Bearer ${this.#token.value}`) this.#token = undefined;
    return true;
  }

  close(): void {
    this.#o.client?.close();
  }

  #error(reason: string): GatewayError {
    return new GatewayError(
      502,
      "backend_auth_failed",
      `backend ${this.#o.backend}: no access token from ${this.#o.token_url}: ${reason}`,
    );
  }

  async #fetch(): Promise<string> {
    try {
      const token = await this.#request();
      this.#failed = undefined;
      return token;
    } catch (err) {
      const error = err instanceof GatewayError ? err : this.#error((err as Error).message);
      this.#failed = { error, until: this.#clock.now() + FAILURE_HOLD_MS };
      throw error;
    }
  }

  async #request(): Promise<string> {
    const o = this.#o;
    const form = new URLSearchParams({ grant_type: "client_credentials" });
    if (o.scopes.length) form.set("scope", o.scopes.join(" "));
    if (o.audience) form.set("audience", o.audience);
    if (o.resource) form.set("resource", o.resource);
    const headers = new Headers({
      "content-type": "application/x-www-form-urlencoded",
      accept: "application/json",
    });
    if (o.client_auth === "client_secret_basic") {
      // RFC 6749 §2.3.1: id and secret are form-encoded before Basic.
      const [name, value] = basicAuthorization(
        formEncode(o.client_id),
        formEncode(o.client_secret ?? ""),
      );
      headers.set(name, value);
    } else if (o.client_auth === "client_secret_post") {
      form.set("client_id", o.client_id);
      form.set("client_secret", o.client_secret ?? "");
    } else {
      const signer = o.signer!;
      const now = Math.floor(this.#clock.now() / 1000);
      const assertion = await new SignJWT({})
        .setProtectedHeader({
          alg: signer.alg,
          typ: "JWT",
          ...(signer.kid ? { kid: signer.kid } : {}),
        })
        .setIssuer(o.client_id)
        .setSubject(o.client_id)
        .setAudience(o.token_url)
        .setJti(crypto.randomUUID())
        .setIssuedAt(now)
        // SMART Backend Services: no more than five minutes.
        .setExpirationTime(now + 120)
        .sign(signer.key);
      form.set("client_id", o.client_id);
      form.set("client_assertion_type", "urn:ietf:params:oauth:client-assertion-type:jwt-bearer");
      form.set("client_assertion", assertion);
    }
    const started = this.#clock.now();
    let res: Response;
    try {
      res = await fetch(o.token_url, {
        method: "POST",
        headers,
        body: form,
        redirect: "manual",
        signal: timeoutSignal(this.#clock, o.timeout_secs * 1000),
        ...(o.client ? { client: o.client } : {}),
      });
    } catch (err) {
      const name = (err as Error).name;
      throw this.#error(
        name === "TimeoutError"
          ? `it did not answer within ${o.timeout_secs} s`
          : `it cannot be reached (${(err as Error).message})`,
      );
    }
    const text = await readLimited(res, MAX_RESPONSE_BYTES).catch((err) => {
      throw this.#error(`its answer could not be read (${(err as Error).message})`);
    });
    let body: Record<string, unknown> | undefined;
    try {
      const parsed = JSON.parse(text);
      if (parsed && typeof parsed === "object" && !Array.isArray(parsed)) body = parsed;
    } catch {
      // reported below
    }
    if (res.status !== 200) {
      const oauthError = typeof body?.error === "string"
        ? `: ${body.error}${
          typeof body.error_description === "string" ? ` (${body.error_description})` : ""
        }`
        : "";
      throw this.#error(`it answered ${res.status}${oauthError.slice(0, 300)}`);
    }
    if (!body) throw this.#error("its answer is not a JSON object");
    const value = body.access_token;
    if (typeof value !== "string" || !/^[\x21-\x7e]+$/.test(value)) {
      throw this.#error("its answer has no access_token");
    }
    if (typeof body.token_type === "string" && body.token_type.toLowerCase() !== "bearer") {
      throw this.#error(`token_type ${JSON.stringify(body.token_type)} is not Bearer`);
    }
    const lifetime = typeof body.expires_in === "number" && body.expires_in > 0
      ? body.expires_in
      : DEFAULT_LIFETIME_S;
    // Renewed a tenth of its life (at most a minute, at least a second) before it ends.
    const margin = Math.min(60, Math.max(1, lifetime / 10));
    this.#token = { value, refreshAt: started + (lifetime - margin) * 1000 };
    return value;
  }
}

function bearer(token: string): readonly HeaderField[] {
  return [["authorization", `Bearer ${token}`]];
}

/** `application/x-www-form-urlencoded` encoding of one value. */
function formEncode(value: string): string {
  return new URLSearchParams({ v: value }).toString().slice(2);
}

/** The body as text, refusing more than `limit` bytes. */
async function readLimited(res: Response, limit: number): Promise<string> {
  if (!res.body) return "";
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > limit) {
      await reader.cancel();
      throw new Error(`over ${limit} bytes`);
    }
    parts.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    all.set(p, at);
    at += p.length;
  }
  return new TextDecoder().decode(all);
}

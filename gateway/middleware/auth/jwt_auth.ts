/**
 * The `jwt_auth` middleware: OAuth 2.0 bearer tokens (RFC 6750) that are JWTs, verified with jose
 * against the issuer's keys (jwks.ts): signature with an allowed asymmetric algorithm (never
 * `none`, never HMAC), `iss`, `aud`, `exp`/`nbf` with a clock skew, required claims and scopes.
 * `sub` becomes `auth.subject`, `client_id` (or `azp`) `auth.client_id`, the scopes `auth.scopes`.
 * A verified token is remembered (by its SHA-256, until it expires or for 5 minutes at most), so a
 * client sending the same token on every request pays the signature check once.
 * Failures answer 401 (`invalid_token`) or 403 (`insufficient_scope`) with an RFC 6750 challenge;
 * a malformed header 400 (`invalid_request`); keys that cannot be fetched 503. The reason is
 * logged at debug level, the token never.
 */
import { errors, type JWTPayload, jwtVerify, type JWTVerifyGetKey } from "jose";
import type { MiddlewareConfig } from "../../../shared/gateway_config/mod.ts";
import type { Logger } from "../../../shared/mod.ts";
import type { RequestEnvelope, ResponseEnvelope } from "../../envelope.ts";
import { GatewayError } from "../../errors.ts";
import type { BuildContext, Middleware } from "../../pipeline/mod.ts";
import { bearerToken, sha256Hex } from "./credentials.ts";
import { challenge, forbidden, unauthorized } from "./failures.ts";
import { setIdentity } from "./identity.ts";
import { localKeys, MAX_JWKS_BYTES, remoteKeys } from "./jwks.ts";
import { fhirRequest } from "../request_kind.ts";
import { inCompartment, patientConfined, smartDecision, smartGrants } from "./smart.ts";

/** Options of `jwt_auth` (after schema checks). */
export interface JwtAuthOptions {
  jwks_url?: string;
  jwks_path?: string;
  issuer: string;
  audience: string[];
  algorithms: string[];
  clock_skew_secs: number;
  required_scopes: string[];
  required_claims: string[];
  realm: string;
  forward_credentials: boolean;
  /** Enforce SMART on FHIR scopes per resource type and interaction (smart.ts). */
  smart?: boolean;
}

/** Verified tokens remembered per middleware, and for how long at most. */
const REMEMBERED_TOKENS = 10_000;
const REMEMBER_TOKEN_MS = 5 * 60_000;

/** The scopes of a token: `scope` (space-separated, RFC 8693/9068) or `scp` (a list). */
export function scopesOf(payload: JWTPayload): string[] {
  if (typeof payload.scope === "string") return payload.scope.split(" ").filter(Boolean);
  if (Array.isArray(payload.scp)) return payload.scp.filter((s) => typeof s === "string");
  return [];
}

/** The bearer-token middleware. */
export class JwtAuthMiddleware implements Middleware {
  readonly name: string;
  readonly acts: { request: boolean; response: boolean };
  readonly #keys: JWTVerifyGetKey;
  /** Requests whose answer must be checked against the token's patient (SMART, patient/ scopes). */
  readonly #answerFor = new WeakMap<RequestEnvelope, string>();
  readonly #options: JwtAuthOptions;
  readonly #logger: Logger;
  /** SHA-256 of a verified token -> its payload and until when it may be reused. */
  readonly #verified = new Map<string, { payload: JWTPayload; until: number }>();

  constructor(name: string, keys: JWTVerifyGetKey, options: JwtAuthOptions, logger: Logger) {
    this.name = name;
    this.#keys = keys;
    this.#options = options;
    this.#logger = logger;
    this.acts = { request: true, response: options.smart === true };
  }

  #challenge(params: Record<string, string> = {}): string {
    return challenge("Bearer", { realm: this.#options.realm, ...params });
  }

  async onRequest(req: RequestEnvelope): Promise<void> {
    const header = req.readHeaders.get("authorization");
    if (header === null || !/^bearer(\s|$)/i.test(header)) {
      throw unauthorized("missing_credentials", "a bearer token is required", this.#challenge());
    }
    const token = bearerToken(header);
    if (token === null) {
      const err = new GatewayError(
        400,
        "invalid_request",
        "the Authorization header is not a valid bearer token",
      );
      err.headers = { "www-authenticate": this.#challenge({ error: "invalid_request" }) };
      throw err;
    }
    const payload = await this.#verify(token, req);
    const scopes = scopesOf(payload);
    const missing = this.#options.required_scopes.filter((s) => !scopes.includes(s));
    if (missing.length) {
      throw forbidden(
        "insufficient_scope",
        `the token lacks the scope ${missing.join(" ")}`,
        this.#challenge({
          error: "insufficient_scope",
          scope: this.#options.required_scopes.join(" "),
        }),
      );
    }
    const clientId = typeof payload.client_id === "string"
      ? payload.client_id
      : typeof payload.azp === "string"
      ? payload.azp
      : undefined;
    if (this.#options.smart) await this.#smart(req, payload, scopes);
    if (!this.#options.forward_credentials) req.headers.delete("authorization");
    setIdentity(req, {
      method: "jwt_auth",
      subject: payload.sub ?? clientId ?? "",
      clientId,
      scopes,
    });
  }

  /** SMART scopes: the interaction on the resource type, and the patient compartment. */
  async #smart(req: RequestEnvelope, payload: JWTPayload, scopes: string[]): Promise<void> {
    const path = req.path.startsWith("/") ? req.path : `/${req.path}`;
    const denied = (why: string) =>
      forbidden(
        "insufficient_scope",
        `SMART scopes do not allow this request: ${why}`,
        this.#challenge({ error: "insufficient_scope" }),
      );
    const kind = fhirRequest(req.method, path);
    if (!kind) throw denied(`${req.method} ${path} is not a FHIR interaction`);
    const decision = smartDecision(kind, smartGrants(scopes));
    if (!decision.allowed) throw denied(decision.why);
    if (!decision.patientOnly) return;
    const patient = typeof payload.patient === "string" ? payload.patient : undefined;
    if (!patient) throw denied("patient/ scopes need a token with a patient claim");
    let confined: boolean;
    try {
      confined = patientConfined(path, req.query, kind, patient);
    } catch (err) {
      throw denied((err as Error).message);
    }
    if (confined) return;
    if (kind.interaction === "create" || kind.interaction === "update") {
      if (!inCompartment(await req.body.data(), patient)) {
        throw denied(`the resource does not belong to Patient/${patient}`);
      }
      return;
    }
    if (kind.interaction === "read" || kind.interaction === "vread") {
      this.#answerFor.set(req, patient); // checked on the answer (onResponse)
      return;
    }
    throw denied(`a patient-context ${kind.interaction} of ${kind.resourceType} cannot be checked`);
  }

  /** SMART, patient/ scopes: an answer outside the patient's compartment is not handed out. */
  async onResponse(res: ResponseEnvelope, req: RequestEnvelope): Promise<void> {
    const patient = this.#answerFor.get(req);
    if (patient === undefined || res.status < 200 || res.status >= 300) return;
    if (!inCompartment(await res.body.data(), patient)) {
      throw forbidden(
        "insufficient_scope",
        `SMART scopes do not allow this request: the resource does not belong to Patient/${patient}`,
        this.#challenge({ error: "insufficient_scope" }),
      );
    }
  }

  async #verify(token: string, req: RequestEnvelope): Promise<JWTPayload> {
    const o = this.#options;
    const digest = sha256Hex(token);
    const now = Date.now();
    const seen = this.#verified.get(digest);
    if (seen && seen.until > now) return seen.payload;
    try {
      const { payload } = await jwtVerify(token, this.#keys, {
        issuer: o.issuer,
        audience: o.audience,
        algorithms: o.algorithms,
        clockTolerance: o.clock_skew_secs,
        requiredClaims: ["exp", ...o.required_claims],
      });
      // Reused only while jose would still accept it (exp is required), 5 minutes at most.
      const until = Math.min(
        payload.exp! * 1000 + o.clock_skew_secs * 1000,
        now + REMEMBER_TOKEN_MS,
      );
      this.#verified.delete(digest);
      if (this.#verified.size >= REMEMBERED_TOKENS) {
        this.#verified.delete(this.#verified.keys().next().value!);
      }
      this.#verified.set(digest, { payload, until });
      return payload;
    } catch (err) {
      if (keysUnavailable(err)) {
        this.#logger.warn("jwt_auth: the issuer's keys cannot be fetched", {
          middleware: this.name,
          request_id: req.id,
          error: (err as Error).message,
        });
        const unavailable = new GatewayError(
          503,
          "jwks_unavailable",
          "the token cannot be checked now: the issuer's keys are unavailable",
        );
        unavailable.headers = { "retry-after": "5" };
        throw unavailable;
      }
      const reason = tokenProblem(err as errors.JOSEError);
      this.#logger.debug("jwt_auth: token refused", {
        middleware: this.name,
        request_id: req.id,
        reason,
      });
      throw unauthorized(
        "invalid_token",
        `the bearer token is not valid: ${reason}`,
        this.#challenge({ error: "invalid_token", error_description: reason }),
      );
    }
  }
}

/**
 * True when the failure is the issuer's keys, not the token: a fetch that failed, timed out,
 * answered another status than 200, or answered something that is not a key set.
 */
function keysUnavailable(err: unknown): boolean {
  if (!(err instanceof errors.JOSEError)) return true;
  return err instanceof errors.JWKSTimeout || err instanceof errors.JWKSInvalid ||
    err.constructor === errors.JOSEError;
}

/** Why jose refused a token, in words that reveal nothing secret. */
function tokenProblem(err: errors.JOSEError): string {
  if (err instanceof errors.JWTExpired) return "expired";
  if (err instanceof errors.JWTClaimValidationFailed) {
    return `claim ${err.claim} ${err.reason === "missing" ? "is missing" : "does not match"}`;
  }
  if (err instanceof errors.JOSEAlgNotAllowed) return "signed with an algorithm not allowed here";
  if (err instanceof errors.JWKSNoMatchingKey) return "signed by a key the issuer does not publish";
  if (err instanceof errors.JWSSignatureVerificationFailed) return "the signature does not verify";
  if (err instanceof errors.JWTInvalid || err instanceof errors.JWSInvalid) return "malformed";
  return "not accepted";
}

/** Build a `jwt_auth` middleware: a remote key set, or the JWKS file read now. */
export async function createJwtAuthMiddleware(
  config: MiddlewareConfig,
  ctx: BuildContext,
): Promise<Middleware> {
  const options = config.options as unknown as JwtAuthOptions;
  let keys: JWTVerifyGetKey;
  if (options.jwks_url) {
    keys = remoteKeys(options.jwks_url);
  } else {
    const path = options.jwks_path!;
    const file = path.startsWith("/") ? path : `${ctx.baseDir}/${path}`;
    try {
      const info = await Deno.stat(file);
      if (info.size > MAX_JWKS_BYTES) throw new Error(`larger than ${MAX_JWKS_BYTES} bytes`);
      keys = localKeys(await Deno.readTextFile(file), file);
    } catch (err) {
      throw new Error(`middleware ${config.name}: jwks_path: ${(err as Error).message}`, {
        cause: err,
      });
    }
  }
  return new JwtAuthMiddleware(config.name, keys, options, ctx.logger);
}

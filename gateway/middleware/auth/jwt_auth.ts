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
import { type Clock, type Logger, systemClock } from "../../../shared/mod.ts";
import type { MiddlewareConfig } from "../../../shared/gateway_config/mod.ts";
import { RequestEnvelope, type ResponseEnvelope } from "../../envelope.ts";
import { GatewayError } from "../../errors.ts";
import type { BuildContext, Middleware, UpstreamReader } from "../../pipeline/mod.ts";
import { parseMediaType } from "../../codecs/mod.ts";
import { bearerToken, sha256Hex } from "./credentials.ts";
import { challenge, forbidden, unauthorized } from "./failures.ts";
import { setIdentity } from "./identity.ts";
import { localKeys, MAX_JWKS_BYTES, remoteKeys } from "./jwks.ts";
import { type FhirRequest, fhirRequest } from "../request_kind.ts";
import { decidedPathOf, refuseMethodOverride } from "../request_path.ts";
import { smartDecision, smartGrants } from "./smart.ts";
import { loadPatientCompartment, type PatientCompartment } from "./patient_compartment.ts";
import { patientPlan } from "./patient_rules.ts";
import { answerProblem } from "./patient_answer.ts";

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
  /** Types outside every compartment that `patient/` scopes may read (patient_rules.ts). */
  smart_shared_types?: string[];
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
  readonly readsUpstream: boolean;
  readonly #keys: JWTVerifyGetKey;
  /** The R4 Patient compartment (SMART only). */
  readonly #compartment: PatientCompartment | undefined;
  readonly #sharedTypes: ReadonlySet<string>;
  /** Requests whose answer must be checked against the token's patient (SMART, patient/ scopes). */
  readonly #answerFor = new WeakMap<RequestEnvelope, string>();
  readonly #options: JwtAuthOptions;
  readonly #logger: Logger;
  /** SHA-256 of a verified token -> its payload and until when it may be reused. */
  readonly #verified = new Map<string, { payload: JWTPayload; until: number }>();
  /** Time of `exp` and `nbf` checks and of the reuse of verified tokens (tests). */
  readonly #clock: Pick<Clock, "now">;

  constructor(
    name: string,
    keys: JWTVerifyGetKey,
    options: JwtAuthOptions,
    logger: Logger,
    compartment?: PatientCompartment,
    clock: Pick<Clock, "now"> = systemClock,
  ) {
    this.name = name;
    this.#clock = clock;
    this.#keys = keys;
    this.#options = options;
    this.#logger = logger;
    if (options.smart && !compartment) throw new Error("SMART scopes need the patient compartment");
    this.#compartment = compartment;
    this.#sharedTypes = new Set(options.smart_shared_types ?? []);
    this.acts = { request: true, response: options.smart === true };
    this.readsUpstream = options.smart === true;
  }

  #challenge(params: Record<string, string> = {}): string {
    return challenge("Bearer", { realm: this.#options.realm, ...params });
  }

  async onRequest(req: RequestEnvelope, upstream?: UpstreamReader): Promise<void> {
    const header = req.readHeaders.get("authorization");
    // SMART apps discover the server before they hold a token: its CapabilityStatement and
    // SMART configuration are public (SMART App Launch 2.x §Conformance).
    if (header === null && this.#options.smart && isSmartDiscovery(req)) return;
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
    const clientId = typeof payload.client_id === "string"
      ? payload.client_id
      : typeof payload.azp === "string"
      ? payload.azp
      : undefined;
    // Set before the scope checks, so that a refusal is logged and audited with who asked.
    setIdentity(req, {
      method: "jwt_auth",
      subject: payload.sub ?? clientId ?? "",
      clientId,
      scopes,
    });
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
    if (this.#options.smart) await this.#smart(req, payload, scopes, upstream);
    if (!this.#options.forward_credentials) req.headers.delete("authorization");
  }

  /** SMART scopes: the interaction on the resource type, and the patient compartment. */
  async #smart(
    req: RequestEnvelope,
    payload: JWTPayload,
    scopes: string[],
    upstream: UpstreamReader | undefined,
  ): Promise<void> {
    // Decided on what the server will act on: the decoded path and the real method.
    refuseMethodOverride(req);
    const { segments, path } = decidedPathOf(req);
    const kind = fhirRequest(req.method, segments);
    if (!kind) throw this.#denied(`${req.method} ${path} is not a FHIR interaction`);
    const decision = smartDecision(kind, smartGrants(scopes));
    if (!decision.allowed) throw this.#denied(decision.why);
    if (!decision.patientOnly) return;
    const patient = typeof payload.patient === "string" ? payload.patient : undefined;
    if (!patient) throw this.#denied("patient/ scopes need a token with a patient claim");
    const compartment = this.#compartment!;
    const plan = patientPlan(
      {
        method: req.method.toUpperCase(),
        segments,
        kind,
        params: await searchParams(req, kind),
        ifNoneExist: req.readHeaders.get("if-none-exist"),
      },
      patient,
      compartment,
      this.#sharedTypes,
    );
    if (plan.refused !== undefined) throw this.#denied(plan.refused);
    // Answers are checked as JSON: a client that accepts nothing else is told so.
    const accept = req.readHeaders.get("accept");
    if (accept !== null && !/json|\*\/\*/i.test(accept)) {
      throw new GatewayError(
        406,
        "not_acceptable",
        "answers to patient-context requests are checked as FHIR JSON: accept application/fhir+json",
      );
    }
    req.headers.set("accept", "application/fhir+json");
    if (plan.body) {
      const problem = await this.#bodyProblem(req, plan.body, patient);
      if (problem) throw this.#denied(problem);
    }
    if (plan.preRead) {
      await this.#preRead(req, plan.preRead, plan.ifMatch === true, patient, upstream);
    }
    this.#answerFor.set(req, patient); // every answer is checked (onResponse)
  }

  #denied(why: string): GatewayError {
    return forbidden(
      "insufficient_scope",
      `SMART scopes do not allow this request: ${why}`,
      this.#challenge({ error: "insufficient_scope" }),
    );
  }

  /** Why a create/update body is not a resource of `want.type` inside the compartment, or null. */
  async #bodyProblem(
    req: RequestEnvelope,
    want: { type: string; id?: string },
    patient: string,
  ): Promise<string | null> {
    const type = parseMediaType(req.body.contentType)?.type;
    if (type !== "application/fhir+json" && type !== "application/json") {
      return "a patient-context write must send FHIR JSON (application/fhir+json)";
    }
    const resource = await req.body.data(); // duplicate keys are a 400 (codecs/json.ts)
    const r = resource as { resourceType?: unknown; id?: unknown } | null;
    if (r?.resourceType !== want.type) return `the body is not a ${want.type}`;
    if (want.id !== undefined && r.id !== undefined && r.id !== want.id) {
      return `the body's id ${String(r.id)} is not the id ${want.id} of the path`;
    }
    return this.#compartment!.outside(resource, patient);
  }

  /**
   * Reads the resource a write would replace or delete: it must be inside the compartment (or
   * not exist). An update then carries `If-Match` with the version read, unless the client sent
   * its own, so the server replaces the resource that was checked or refuses (412).
   */
  async #preRead(
    req: RequestEnvelope,
    path: string,
    ifMatch: boolean,
    patient: string,
    upstream: UpstreamReader | undefined,
  ): Promise<void> {
    if (!upstream) throw this.#denied("the resource to write cannot be read first here");
    const headers = new Headers({ accept: "application/fhir+json" });
    const auth = req.readHeaders.get("authorization");
    if (this.#options.forward_credentials && auth !== null) headers.set("authorization", auth);
    const read = new RequestEnvelope({
      id: req.id,
      protocol: req.protocol,
      method: "GET",
      path,
      headers,
      metadata: { ...req.metadata },
      endpoint: req.endpoint,
      remoteAddr: req.remoteAddr,
      scheme: req.scheme,
      host: req.host,
      signal: () => req.signal,
    });
    const res = await upstream.read(read);
    if (res.status === 404 || res.status === 410) {
      await discard(res);
      return; // nothing there yet (an update creates it) or already deleted
    }
    if (res.status !== 200) {
      await discard(res);
      throw this.#denied(
        `the resource to write could not be read first (the server answered ${res.status})`,
      );
    }
    let current: unknown;
    try {
      current = await res.body.data();
    } catch (err) {
      throw new GatewayError(
        502,
        "invalid_fhir_response",
        `the resource to write could not be read first: ${(err as Error).message}`,
      );
    }
    const problem = this.#compartment!.outside(current, patient);
    if (problem) throw this.#denied(problem);
    if (ifMatch && !req.readHeaders.has("if-match")) {
      const etag = res.headers.get("etag");
      const version = (current as { meta?: { versionId?: unknown } }).meta?.versionId;
      const tag = etag ?? (typeof version === "string" ? `W/"${version}"` : null);
      if (tag === null) {
        throw this.#denied("the resource to write has no version to bind the update to");
      }
      req.headers.set("if-match", tag);
    }
  }

  /** SMART, patient/ scopes: an answer with a resource outside the compartment is not handed out. */
  async onResponse(res: ResponseEnvelope, req: RequestEnvelope): Promise<void> {
    const patient = this.#answerFor.get(req);
    if (patient === undefined || res.body.isEmpty || res.body.knownLength === 0) return;
    const type = parseMediaType(res.headers.get("content-type"))?.type;
    if (type !== "application/fhir+json" && type !== "application/json") {
      await discard(res);
      throw new GatewayError(
        502,
        "invalid_fhir_response",
        `the answer (${type ?? "no content type"}) cannot be checked against the patient ` +
          "compartment: FHIR JSON was asked for",
      );
    }
    let answer: unknown;
    try {
      answer = await res.body.data();
    } catch (err) {
      throw new GatewayError(
        502,
        "invalid_fhir_response",
        `the answer cannot be checked against the patient compartment: ${(err as Error).message}`,
      );
    }
    const problem = answerProblem(answer, patient, this.#compartment!, this.#sharedTypes);
    if (problem) {
      this.#logger.warn("jwt_auth: an answer outside the patient compartment was withheld", {
        middleware: this.name,
        request_id: req.id,
        status: res.status,
        reason: problem,
      });
      throw this.#denied(`the answer holds a resource outside the compartment: ${problem}`);
    }
  }

  async #verify(token: string, req: RequestEnvelope): Promise<JWTPayload> {
    const o = this.#options;
    const digest = sha256Hex(token);
    const now = this.#clock.now();
    const seen = this.#verified.get(digest);
    if (seen && seen.until > now) return seen.payload;
    try {
      const { payload } = await jwtVerify(token, this.#keys, {
        issuer: o.issuer,
        audience: o.audience,
        algorithms: o.algorithms,
        clockTolerance: o.clock_skew_secs,
        currentDate: new Date(now),
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
 * The search parameters of a request: its query, and for a POSTed `_search` its form body too
 * (read here, then forwarded as it came).
 */
async function searchParams(req: RequestEnvelope, kind: FhirRequest): Promise<URLSearchParams> {
  const params = new URLSearchParams(req.query);
  if (kind.interaction !== "search" || req.method.toUpperCase() !== "POST" || req.body.isEmpty) {
    return params;
  }
  const type = parseMediaType(req.body.contentType)?.type;
  if (type !== "application/x-www-form-urlencoded") {
    throw new GatewayError(
      415,
      "unsupported_media_type",
      "a POSTed search must send application/x-www-form-urlencoded parameters",
    );
  }
  for (const [name, value] of new URLSearchParams(await req.body.text())) {
    params.append(name, value);
  }
  return params;
}

/** `GET /metadata` or `GET /.well-known/smart-configuration`, exactly, without a query. */
function isSmartDiscovery(req: RequestEnvelope): boolean {
  if (req.method !== "GET" || req.queryString() !== "") return false;
  const path = req.path;
  return path === "/metadata" || path === "/.well-known/smart-configuration";
}

/** Releases an answer's body that is not passed on. */
async function discard(res: ResponseEnvelope): Promise<void> {
  const body = res.body.forwardable();
  if (body instanceof ReadableStream) await body.cancel().catch(() => {});
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
  const compartment = options.smart ? await loadPatientCompartment() : undefined;
  for (const type of options.smart_shared_types ?? []) {
    if (!compartment!.isResourceType(type)) {
      throw new Error(
        `middleware ${config.name}: smart_shared_types: ${type} is not an R4 resource type`,
      );
    }
    if (compartment!.has(type)) {
      throw new Error(
        `middleware ${config.name}: smart_shared_types: ${type} belongs to patient compartments ` +
          "(it holds patient data): only types outside every compartment can be shared",
      );
    }
  }
  return new JwtAuthMiddleware(config.name, keys, options, ctx.logger, compartment);
}

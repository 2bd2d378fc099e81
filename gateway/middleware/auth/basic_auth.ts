/**
 * The `basic_auth` middleware: HTTP Basic authentication (RFC 7617) against the users of an
 * htpasswd file (bcrypt or Argon2 hashes only), read when the configuration is loaded and again on
 * every reload. The user name becomes `auth.subject`. The `Authorization` header is removed before
 * the request goes on unless `forward_credentials` is set. Passwords are checked in the isolate's
 * password workers (password_pool.ts), after the client address's check budget
 * (check_budget.ts) allows it.
 */
import type { MiddlewareConfig } from "../../../shared/gateway_config/mod.ts";
import type { RequestEnvelope } from "../../envelope.ts";
import type { PasswordMetrics } from "../../observability/mod.ts";
import type { BuildContext, Middleware } from "../../pipeline/mod.ts";
import { CheckBudget } from "./check_budget.ts";
import { basicCredential } from "./credentials.ts";
import { challenge, unauthorized } from "./failures.ts";
import { MAX_HTPASSWD_BYTES, parseHtpasswd } from "./htpasswd.ts";
import { setIdentity } from "./identity.ts";
import { decoyFor, PasswordChecks } from "./password_checks.ts";
import { leasePasswordPool, type PasswordPoolLease } from "./password_pool.ts";

/** Options of `basic_auth` (after schema checks). */
export interface BasicAuthOptions {
  htpasswd_path: string;
  realm: string;
  forward_credentials: boolean;
  /** Password checks (not remembered answers) one client address may cause per minute. */
  address_checks_per_minute: number;
  /** Checks an address may cause at once before the per-minute rate applies. */
  address_check_burst: number;
  /** Addresses whose budgets are kept (least recently used forgotten). */
  max_addresses: number;
}

/** What a BasicAuthMiddleware checks with (the build gives the isolate's pool and shared memory). */
export interface BasicAuthDeps {
  /** Where passwords are hashed; released by close(). */
  pool: PasswordPoolLease;
  /** The per-address check budget. */
  budget: CheckBudget;
  /** Where the passwords hashed are counted (the gateway's metrics). */
  metrics?: PasswordMetrics;
}

/** The Basic authentication middleware. */
export class BasicAuthMiddleware implements Middleware {
  readonly name: string;
  readonly acts = { request: true, response: false };
  readonly #users: Map<string, string>;
  readonly #forward: boolean;
  readonly #challenge: string;
  readonly #checks: PasswordChecks;
  readonly #deps: BasicAuthDeps;

  constructor(
    name: string,
    users: Map<string, string>,
    options: BasicAuthOptions,
    deps: BasicAuthDeps,
  ) {
    this.name = name;
    this.#users = users;
    this.#forward = options.forward_credentials;
    this.#challenge = challenge("Basic", { realm: options.realm, charset: "UTF-8" });
    this.#deps = deps;
    const metrics = deps.metrics;
    this.#checks = new PasswordChecks(
      deps.pool,
      decoyFor(users.values()),
      metrics && ((known, parameters) => metrics.checked(name, known, parameters)),
    );
  }

  async onRequest(req: RequestEnvelope): Promise<void> {
    const credential = basicCredential(req.readHeaders.get("authorization"));
    if ("problem" in credential) {
      throw credential.problem === "missing"
        ? unauthorized("missing_credentials", "Basic credentials are required", this.#challenge)
        : unauthorized(
          "invalid_request",
          "the Authorization header is not valid Basic credentials",
          this.#challenge,
        );
    }
    const { user, password } = credential;
    const hash = this.#users.get(user);
    const ok = await this.#checks.verify(user, password, hash, () => this.#deps.budget.spend(req));
    if (!ok) {
      throw unauthorized(
        "invalid_credentials",
        "the user name or password is not valid",
        this.#challenge,
      );
    }
    if (!this.#forward) req.headers.delete("authorization");
    setIdentity(req, { method: "basic_auth", subject: user });
  }

  /** Returns the lease on the password pool (the generation that built it is retired). */
  close(): void {
    this.#deps.pool.release();
  }
}

/** A lease that checks nothing: what `--validate-config` builds with (no worker is started). */
const NO_POOL: PasswordPoolLease = {
  verify: () => Promise.reject(new Error("basic_auth: built to validate only")),
  release: () => {},
};

/** Build a `basic_auth` middleware: reads and checks the htpasswd file. */
export async function createBasicAuthMiddleware(
  config: MiddlewareConfig,
  ctx: BuildContext,
): Promise<Middleware> {
  const options = config.options as unknown as BasicAuthOptions;
  const file = options.htpasswd_path.startsWith("/")
    ? options.htpasswd_path
    : `${ctx.baseDir}/${options.htpasswd_path}`;
  let text: string;
  try {
    const info = await Deno.stat(file);
    if (info.size > MAX_HTPASSWD_BYTES) throw new Error(`larger than ${MAX_HTPASSWD_BYTES} bytes`);
    text = await Deno.readTextFile(file);
  } catch (err) {
    throw new Error(
      `middleware ${config.name}: cannot read htpasswd_path ${file}: ${(err as Error).message}`,
      { cause: err },
    );
  }
  let users: Map<string, string>;
  try {
    users = parseHtpasswd(text, file);
  } catch (err) {
    throw new Error(`middleware ${config.name}: ${(err as Error).message}`, { cause: err });
  }
  // One budget table for every worker: the build hands each the same shared memory by name.
  const memory = ctx.sharedMemory?.(
    `middleware.${config.name}`,
    CheckBudget.bytesFor(options.max_addresses),
  );
  const budget = new CheckBudget({
    perMinute: options.address_checks_per_minute,
    burst: options.address_check_burst,
    maxAddresses: options.max_addresses,
  }, memory);
  const pool = ctx.validateOnly ? NO_POOL : leasePasswordPool();
  return new BasicAuthMiddleware(config.name, users, options, {
    pool,
    budget,
    metrics: ctx.metrics?.passwords,
  });
}

/**
 * The `basic_auth` middleware: HTTP Basic authentication (RFC 7617) against the users of an
 * htpasswd file (bcrypt or Argon2 hashes only), read when the configuration is loaded and again on
 * every reload. The user name becomes `auth.subject`. The `Authorization` header is removed before
 * the request goes on unless `forward_credentials` is set.
 */
import type { MiddlewareConfig } from "../../../shared/gateway_config/mod.ts";
import type { RequestEnvelope } from "../../envelope.ts";
import type { BuildContext, Middleware } from "../../pipeline/mod.ts";
import { basicCredential } from "./credentials.ts";
import { challenge, unauthorized } from "./failures.ts";
import { MAX_HTPASSWD_BYTES, parseHtpasswd } from "./htpasswd.ts";
import { setIdentity } from "./identity.ts";
import { PasswordChecks } from "./password_checks.ts";

/** Options of `basic_auth` (after schema checks). */
export interface BasicAuthOptions {
  htpasswd_path: string;
  realm: string;
  forward_credentials: boolean;
}

/** The Basic authentication middleware. */
export class BasicAuthMiddleware implements Middleware {
  readonly name: string;
  readonly acts = { request: true, response: false };
  readonly #users: Map<string, string>;
  readonly #forward: boolean;
  readonly #challenge: string;
  readonly #checks = new PasswordChecks();

  constructor(name: string, users: Map<string, string>, options: BasicAuthOptions) {
    this.name = name;
    this.#users = users;
    this.#forward = options.forward_credentials;
    this.#challenge = challenge("Basic", { realm: options.realm, charset: "UTF-8" });
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
    if (!(await this.#checks.verify(user, password, this.#users.get(user)))) {
      throw unauthorized(
        "invalid_credentials",
        "the user name or password is not valid",
        this.#challenge,
      );
    }
    if (!this.#forward) req.headers.delete("authorization");
    setIdentity(req, { method: "basic_auth", subject: user });
  }
}

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
  return new BasicAuthMiddleware(config.name, users, options);
}

/**
 * The gateway's cloud integration: owns the machine-token store, the cloud client and verifier,
 * and the sync; answers the management API's cloud operations. The gateway calls
 * {@link CloudIntegration.init} once, {@link CloudIntegration.configure} with each configuration
 * that starts serving, {@link CloudIntegration.run} once listeners are up, and
 * {@link CloudIntegration.stop} on shutdown.
 */
import { redactConfigText } from "../../shared/gateway_config/mod.ts";
import { relative } from "node:path";
import type { GatewayConfig } from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import { GATEWAY_CODE_PATTERN, type MachineTokenPayload } from "../../shared/mod.ts";
import { causedError, GatewayError } from "../errors.ts";
import type { TransformSource } from "../middleware/mod.ts";
import type { CloudMetrics } from "../observability/mod.ts";
import { CloudClient, CloudHttpError, CloudUnreachableError } from "./client.ts";
import { type Clock, systemClock } from "./clock.ts";
import { ENCRYPTION_KEY_ENV, type EncryptionKey, parseEncryptionKey } from "./encryption_key.ts";
import { JWT_SECRET_ENV, TokenRejectedError, TokenVerifier } from "./jwt.ts";
import { ManagedConfigFiles } from "./managed_config.ts";
import {
  type CloudSettings,
  cloudSettings,
  identityChanged,
  normalizeCloudUrl,
} from "./settings.ts";
import { CloudSync, type SyncHost } from "./sync.ts";
import { initialSyncStatus, type SyncStatus } from "./sync_status.ts";
import { checkPayloadLocally, verifyWithCloud } from "./token_checks.ts";
import { readEnvToken } from "./env_token.ts";
import { identityOf, readPin, removePin, writePin } from "./pin.ts";
import { renewalTime } from "./renewal.ts";
import { type HeldToken, MachineTokenStore } from "./token_store.ts";
import { CloudTransformSource, TransformFetcher } from "./transforms.ts";
import type { CloudControl, CloudInfo, ConfigUploaded, PinReset, TokenStored } from "./types.ts";

/** Name of the variable holding a machine-token payload to use at start (SPEC, Auth. 4). */
export const MACHINE_TOKEN_ENV = "GATEWAY_MACHINE_TOKEN";

/** Options of the integration. */
export interface CloudIntegrationOptions {
  logger: Logger;
  metrics: CloudMetrics;
  /** Environment lookup (default: the process environment). */
  env?: (name: string) => string | undefined;
  clock?: Clock;
  fetch?: typeof fetch;
  /** Seconds of one configuration long poll (default 60). */
  pollWaitSecs?: number;
  /** How often the renewal loop looks at the clock (default one minute). */
  renewalCheckMs?: number;
}

/** Message of 409 `not_authorized`. */
const NOT_AUTHORIZED = "this gateway holds no machine token: run `gwcli gateway:authorize` " +
  "(or POST a machine token to /{prefix}/token, or set GATEWAY_MACHINE_TOKEN and restart)";

/** One cloud service's client and verifier. */
interface Connection {
  client: CloudClient;
  verifier: TokenVerifier;
  fetcher: TransformFetcher;
}

/** The cloud integration of one gateway process. */
export class CloudIntegration implements CloudControl {
  readonly #logger: Logger;
  readonly #metrics: CloudMetrics;
  readonly #env: (name: string) => string | undefined;
  readonly #clock: Clock;
  readonly #fetch: typeof fetch | undefined;
  readonly #opts: CloudIntegrationOptions;
  #key: EncryptionKey | undefined;
  #store!: MachineTokenStore;
  #host: SyncHost | undefined;
  #settings: CloudSettings | undefined;
  #conn: Connection | undefined;
  #files: ManagedConfigFiles | undefined;
  #sync: CloudSync | undefined;
  #status: SyncStatus = initialSyncStatus();
  /** The `GATEWAY_MACHINE_TOKEN` payload text, until it has been considered once. */
  #envToken: string | undefined;
  /** Serializes reconfigurations and sync restarts. */
  #queue: Promise<void> = Promise.resolve();
  #stopped = false;
  #running = false;

  constructor(opts: CloudIntegrationOptions) {
    this.#opts = opts;
    this.#logger = opts.logger.child({ component: "cloud" });
    this.#metrics = opts.metrics;
    this.#env = opts.env ?? ((name) => Deno.env.get(name));
    this.#clock = opts.clock ?? systemClock;
    this.#fetch = opts.fetch;
  }

  /**
   * Reads `GATEWAY_ENCRYPTION_KEY` and `GATEWAY_MACHINE_TOKEN`. Throws EncryptionKeyError when
   * the key is set but not an age X25519 identity (the gateway must not run believing tokens
   * survive a restart when they do not).
   */
  async init(host: SyncHost): Promise<void> {
    this.#host = host;
    const keyText = this.#env(ENCRYPTION_KEY_ENV);
    this.#key = keyText === undefined || keyText === ""
      ? undefined
      : await parseEncryptionKey(keyText);
    this.#store = new MachineTokenStore(this.#key, this.#logger);
    const envToken = this.#env(MACHINE_TOKEN_ENV);
    this.#envToken = envToken === "" ? undefined : envToken;
  }

  /** Applies the `[cloud]` settings of a configuration that is about to serve or serves. */
  configure(config: GatewayConfig, baseDir: string): Promise<void> {
    return this.#exclusive(() => this.#configure(cloudSettings(config, baseDir)));
  }

  /**
   * Starts the sync when the cloud is enabled and a token is held (call once the listeners are
   * up); from then on every reconfiguration restarts it as needed.
   */
  run(): Promise<void> {
    this.#running = true;
    return this.#exclusive(() => this.#restartSync());
  }

  /** Stops the sync for good (shutdown). */
  stop(): Promise<void> {
    this.#stopped = true;
    return this.#exclusive(() => this.#stopSync());
  }

  /**
   * The transform source of builds of `config`: missing transform id files are downloaded while
   * the cloud is enabled for the same service and a token is held; otherwise undefined (files).
   */
  transformSource(config: GatewayConfig): TransformSource | undefined {
    const conn = this.#conn;
    if (!config.cloud.enabled || !conn || !this.#settings?.enabled) return undefined;
    if (!config.cloud.url || normalizeCloudUrl(config.cloud.url) !== conn.client.baseUrl) {
      return undefined;
    }
    return new CloudTransformSource(config.transforms_path, conn.fetcher);
  }

  // ---- management operations -------------------------------------------------------------

  /** `POST /{prefix}/token`. */
  async storeToken(body: unknown): Promise<TokenStored> {
    const { settings, conn } = await this.#active();
    const check = checkPayloadLocally(body, settings, this.#clock.now());
    if (!check.ok) {
      const [status, code] = check.pinned
        ? [403, "cloud_pin_mismatch"]
        : check.foreign
        ? [401, "machine_token_rejected"]
        : [400, "invalid_machine_token"];
      throw new GatewayError(status, code, check.problems.join("; "));
    }
    try {
      await verifyWithCloud(check.payload, conn.verifier, conn.client);
    } catch (err) {
      if (err instanceof TokenRejectedError) {
        throw causedError(401, "machine_token_rejected", err.message, err);
      }
      throw cloudFailure(err, "verifying the machine token");
    }
    return await this.#hold(check.payload, "management_api");
  }

  /** `POST /{prefix}/authorize`. */
  async authorize(authorization: string | undefined, body: unknown): Promise<TokenStored> {
    const { settings, conn } = await this.#active();
    const userToken = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "")?.[1];
    if (!userToken) {
      throw new GatewayError(
        401,
        "invalid_user_token",
        'send the user token in the body: {"user_token": "<token>"} (from `gwcli login`; ' +
          "`Authorization` carries the management token)",
      );
    }
    const code = gatewayCodeOf(body, settings);
    try {
      await conn.verifier.userToken(userToken, this.#env(JWT_SECRET_ENV) || undefined);
    } catch (err) {
      if (err instanceof TokenRejectedError) {
        throw causedError(401, "invalid_user_token", err.message, err);
      }
      throw cloudFailure(err, "verifying the user token");
    }
    let answer: unknown;
    try {
      answer = await conn.client.authorize(userToken, code);
    } catch (err) {
      if (err instanceof CloudHttpError && err.status === 401) {
        throw new GatewayError(
          401,
          "invalid_user_token",
          `the cloud service refused the user token: ${err.message}`,
        );
      }
      throw cloudFailure(err, "authorizing the gateway");
    }
    const check = checkPayloadLocally(answer, settings, this.#clock.now());
    if (!check.ok && check.pinned) {
      throw new GatewayError(403, "cloud_pin_mismatch", check.problems.join("; "));
    }
    if (!check.ok) {
      throw new GatewayError(
        502,
        "cloud_error",
        `the cloud service answered an unusable machine token: ${check.problems.join("; ")}`,
      );
    }
    try {
      await conn.verifier.machineToken(check.payload.machine_token);
    } catch (err) {
      if (err instanceof TokenRejectedError) {
        throw new GatewayError(
          502,
          "cloud_error",
          `the issued machine token does not verify: ${err.message}`,
        );
      }
      throw cloudFailure(err, "verifying the issued machine token");
    }
    return await this.#hold(check.payload, "authorize");
  }

  /** `POST /{prefix}/update`. */
  async uploadConfig(): Promise<ConfigUploaded> {
    const { conn } = await this.#active();
    const held = this.#store.current;
    if (!held) throw new GatewayError(409, "not_authorized", NOT_AUTHORIZED);
    const files = this.#host!.config().source_files;
    if (files.length === 0) {
      throw new GatewayError(
        409,
        "no_config_file",
        "the gateway runs its embedded default configuration: there is no file to upload",
      );
    }
    const { text, redacted } = await localConfigText(files);
    if (redacted.length) {
      // Keys only, never values: the operator learns what to turn into `${VAR}` references.
      this.#logger.warn(
        "credentials in the configuration were redacted before the upload to the cloud: " +
          "write environment references such as ${FHIR_TOKEN} instead",
        { keys: redacted },
      );
    }
    let answer;
    try {
      answer = await conn.client.uploadLocalConfig(held.payload.machine_token, text);
    } catch (err) {
      if (err instanceof CloudHttpError && err.status === 401) {
        await this.#exclusive(async () => {
          await this.#stopSync();
          await this.#rejected(`the cloud service refused the machine token: ${err.message}`);
        });
        throw causedError(409, "not_authorized", `${err.message}: ${NOT_AUTHORIZED}`, err);
      }
      throw cloudFailure(err, "uploading the configuration");
    }
    this.#metrics.contact(this.#clock.now());
    this.#logger.info("local configuration uploaded to the cloud service", {
      bytes: new TextEncoder().encode(text).byteLength,
      files,
    });
    return {
      uploaded_bytes: new TextEncoder().encode(text).byteLength,
      files,
      sha256: answer.sha256,
      uploaded_at: answer.uploaded_at,
      problems: answer.problems ?? [],
    };
  }

  /** The `cloud` object of `GET /{prefix}/info`. */
  info(): CloudInfo {
    const s = this.#settings;
    const held: HeldToken | undefined = this.#store?.current;
    return {
      enabled: s?.enabled ?? false,
      url: s?.url ?? null,
      gateway_code: held?.payload.gateway_code ?? s?.gatewayCode ?? "",
      gateway_id: held?.payload.gateway_id ?? null,
      authorized: held !== undefined,
      verified: held?.verified ?? false,
      token_source: held?.source ?? null,
      token_expires_at: held?.payload.expires_at ?? null,
      token_renews_at: held
        ? new Date(renewalTime(held.payload, s?.renewBeforeMs)).toISOString()
        : null,
      persisted: held?.persisted ?? false,
      encryption_key: this.#key !== undefined,
      state_dir: s?.enabled ? s.stateDir : null,
      sync: structuredClone(this.#status),
    };
  }

  // ---- internals ---------------------------------------------------------------------------

  #exclusive(fn: () => Promise<void>): Promise<void> {
    const next = this.#queue.then(fn, fn);
    this.#queue = next.catch((err) =>
      this.#logger.error("cloud integration step failed", { error: err as Error })
    );
    return next;
  }

  /** Settings and connection of an enabled cloud (after pending reconfigurations), else 403. */
  async #active(): Promise<{ settings: CloudSettings; conn: Connection }> {
    await this.#queue;
    const settings = this.#settings;
    if (!settings?.enabled || !this.#conn) {
      throw new GatewayError(
        403,
        "cloud_disabled",
        "cloud integration is not active yet: reload the configuration",
      );
    }
    return { settings, conn: this.#conn };
  }

  async #configure(next: CloudSettings): Promise<void> {
    const previous = this.#settings;
    if (!identityChanged(previous, next)) {
      const timing = previous!.statusIntervalMs !== next.statusIntervalMs;
      next.pin = previous!.pin;
      this.#settings = next;
      if (timing && this.#sync) await this.#restartSync();
      return;
    }
    await this.#reconfigure(next);
    if (this.#running) await this.#restartSync();
  }

  async #reconfigure(next: CloudSettings): Promise<void> {
    await this.#stopSync();
    this.#settings = next;
    this.#status = initialSyncStatus();
    this.#conn = undefined;
    this.#files = undefined;
    if (!next.enabled || next.url === null) {
      if (this.#envToken) {
        this.#logger.warn(
          `${MACHINE_TOKEN_ENV} is set but [cloud] enabled is not true: ` +
            "it is used once the cloud is enabled",
        );
      }
      return;
    }
    const client = new CloudClient(next.url, this.#fetch, (call, keys) =>
      this.#logger.warn(
        "credentials inside URLs were redacted from a report to the cloud",
        { call, keys },
      ));
    this.#conn = {
      client,
      verifier: new TokenVerifier(client, next.url, this.#clock),
      fetcher: new TransformFetcher(
        client,
        () => this.#store.current?.payload.machine_token,
        (ok) => this.#metrics.transformDownload(ok),
      ),
    };
    this.#files = new ManagedConfigFiles(next.stateDir);
    try {
      next.pin = await readPin(next.stateDir);
    } catch (err) {
      // Never a silent reset: a damaged pin matches no token until the operator fixes it.
      this.#logger.error("cloud pin unreadable: every machine token is refused", {
        error: (err as Error).message,
      });
      next.pin = { issuer: "<unreadable>", team_id: "", gateway_id: "", pinned_at: "" };
    }
    if (!this.#key) {
      this.#logger.warn(
        `${ENCRYPTION_KEY_ENV} is not set: a machine token is held in memory only ` +
          "and is lost on restart",
      );
    }
    // A token held in memory (no key) survives a reconfiguration it is still valid for.
    const kept = this.#store.current;
    const fromFile = await this.#store.open(next.stateDir);
    const chosen = this.#startupToken(next, fromFile) ??
      (kept && checkPayloadLocally(kept.payload, next, this.#clock.now()).ok
        ? { payload: kept.payload, source: kept.source }
        : undefined);
    if (chosen) {
      await this.#pinIfUnpinned(next, chosen.payload);
      const held = await this.#store.set(chosen.payload, chosen.source, false);
      this.#logger.info(
        "machine token loaded; it is verified with the cloud service on first contact",
        {
          source: chosen.source,
          gateway_id: chosen.payload.gateway_id,
          gateway_code: chosen.payload.gateway_code,
          expires_at: chosen.payload.expires_at,
          persisted: held.persisted,
        },
      );
    }
    this.#metrics.token(chosen ? Date.parse(chosen.payload.expires_at) : null);
    if (await this.#files.read() !== undefined) {
      const state = await this.#files.readState();
      this.#status.config_version = state?.version ?? null;
      this.#status.etag = state?.etag ?? null;
    }
    this.#metrics.configVersion(this.#status.config_version);
  }

  /**
   * The token to start with: the state file's or `GATEWAY_MACHINE_TOKEN`'s. For the same gateway
   * the one expiring later wins (a renewed token beats the variable it came from); for another
   * gateway the variable wins (the operator changed it).
   */
  #startupToken(
    settings: CloudSettings,
    fromFile: MachineTokenPayload | undefined,
  ): { payload: MachineTokenPayload; source: "environment" | "state_file" } | undefined {
    const now = this.#clock.now();
    let file = fromFile;
    if (file) {
      const check = checkPayloadLocally(file, settings, now);
      if (!check.ok) {
        this.#logger.error("the machine token of the state file is not used", {
          problems: check.problems,
        });
        file = undefined;
      }
    }
    let env: MachineTokenPayload | undefined;
    if (this.#envToken !== undefined) {
      const read = readEnvToken(this.#envToken);
      const check = read.ok ? checkPayloadLocally(read.value, settings, now) : read;
      if (check.ok) {
        // Used once: later reloads keep the token it became (renewals replace it).
        this.#envToken = undefined;
        env = check.payload;
      } else {
        // Kept: a reload that fixes the configuration (say [cloud] url) checks it again.
        this.#logger.error(
          `${MACHINE_TOKEN_ENV} is refused: ${
            check.problems.join("; ")
          }. The gateway runs without it; it is checked again when the configuration reloads`,
          { problems: check.problems },
        );
      }
    }
    if (
      env && file && env.gateway_id === file.gateway_id &&
      Date.parse(file.expires_at) >= Date.parse(env.expires_at)
    ) {
      return { payload: file, source: "state_file" };
    }
    if (env) return { payload: env, source: "environment" };
    return file ? { payload: file, source: "state_file" } : undefined;
  }

  /** Holds a verified token, restarts the sync with it, answers the management API. */
  async #hold(
    payload: MachineTokenPayload,
    source: "management_api" | "authorize",
  ): Promise<TokenStored> {
    let held!: HeldToken;
    await this.#exclusive(async () => {
      await this.#stopSync();
      if (this.#settings) await this.#pinIfUnpinned(this.#settings, payload);
      held = await this.#store.set(payload, source, true);
      this.#metrics.token(Date.parse(payload.expires_at));
      this.#status.state = "stopped";
      this.#status.last_error = null;
      await this.#restartSync();
    });
    this.#logger.info("machine token stored", {
      source,
      gateway_id: payload.gateway_id,
      gateway_code: payload.gateway_code,
      expires_at: payload.expires_at,
      persisted: held.persisted,
    });
    return {
      stored: true,
      gateway_id: payload.gateway_id,
      gateway_code: payload.gateway_code,
      expires_at: payload.expires_at,
      persisted: held.persisted,
    };
  }

  /** Pins the gateway to `payload`'s issuer, team and gateway id when it is not pinned yet. */
  async #pinIfUnpinned(settings: CloudSettings, payload: MachineTokenPayload): Promise<void> {
    if (settings.pin) return;
    try {
      settings.pin = await writePin(settings.stateDir, payload, this.#clock.now());
    } catch (err) {
      this.#logger.error("cannot write the cloud pin; it holds for this process only", {
        error: (err as Error).message,
      });
      const now = new Date(this.#clock.now()).toISOString();
      const id = identityOf(payload);
      settings.pin = id ? { ...id, pinned_at: now } : undefined;
    }
    if (settings.pin) {
      this.#logger.info("gateway pinned to its cloud identity", {
        issuer: settings.pin.issuer,
        team_id: settings.pin.team_id,
        gateway_id: settings.pin.gateway_id,
      });
    }
  }

  /** `POST /{prefix}/cloud-pin/reset`: the operator moves the gateway to another team or cloud. */
  async resetPin(): Promise<PinReset> {
    const { settings } = await this.#active();
    const previous = settings.pin ?? null;
    await removePin(settings.stateDir);
    settings.pin = undefined;
    this.#logger.warn(
      "cloud pin reset by the operator: the next machine token accepted pins again",
      {
        previous_issuer: previous?.issuer ?? null,
        previous_team_id: previous?.team_id ?? null,
        previous_gateway_id: previous?.gateway_id ?? null,
      },
    );
    return { reset: previous !== null, previous };
  }

  /** The cloud refused the held token: drop it; calls stop until a new token arrives. */
  async #rejected(reason: string): Promise<void> {
    this.#logger.error(
      "authorization error: the cloud service does not accept the machine token; the gateway " +
        "stops calling it until it gets a new token (run `gwcli gateway:authorize`)",
      { reason },
    );
    this.#status.state = "unauthorized";
    this.#status.last_error = { at: new Date(this.#clock.now()).toISOString(), message: reason };
    await this.#store.clear();
    this.#metrics.token(null);
  }

  async #stopSync(): Promise<void> {
    const sync = this.#sync;
    this.#sync = undefined;
    await sync?.stop();
  }

  async #restartSync(): Promise<void> {
    await this.#stopSync();
    const s = this.#settings;
    if (this.#stopped || !s?.enabled || !this.#conn || !this.#files || !this.#store.current) return;
    const sync = new CloudSync({
      settings: s,
      ...this.#conn,
      store: this.#store,
      files: this.#files,
      host: this.#host!,
      metrics: this.#metrics,
      logger: this.#logger,
      clock: this.#clock,
      status: this.#status,
      onRejected: (reason) => this.#rejected(reason),
      pollWaitSecs: this.#opts.pollWaitSecs,
      renewalCheckMs: this.#opts.renewalCheckMs,
    });
    this.#sync = sync;
    sync.start();
  }
}

/** The gateway code of an authorize request body (optional `gateway_code`). */
function gatewayCodeOf(body: unknown, settings: CloudSettings): string {
  if (body === undefined || body === null) return settings.gatewayCode;
  if (typeof body !== "object" || Array.isArray(body)) {
    throw new GatewayError(
      400,
      "bad_request",
      'the body must be a JSON object: {"user_token": string, "gateway_code"?: string}',
    );
  }
  const code = (body as Record<string, unknown>).gateway_code;
  if (code === undefined) return settings.gatewayCode;
  if (typeof code !== "string" || !GATEWAY_CODE_PATTERN.test(code)) {
    throw new GatewayError(
      400,
      "bad_request",
      "gateway_code: must be 1-64 letters, digits, '.', '_' or '-', " +
        "starting with a letter or digit",
    );
  }
  if (settings.codeConfigured && code !== settings.gatewayCode) {
    throw new GatewayError(
      400,
      "bad_request",
      `gateway_code: this gateway is \`${settings.gatewayCode}\` ([cloud] gateway_code), ` +
        `not \`${code}\``,
    );
  }
  return code;
}

/** A cloud call that failed for another reason than a refused token: 502. */
function cloudFailure(err: unknown, what: string): GatewayError {
  if (err instanceof CloudUnreachableError) {
    return new GatewayError(502, "cloud_unreachable", `${what}: ${err.message}`);
  }
  if (err instanceof CloudHttpError) {
    return new GatewayError(
      502,
      "cloud_error",
      `${what}: the cloud service answered ${err.status} ${err.code}: ${err.message}`,
    );
  }
  throw err;
}

/**
 * The text uploaded by `/update`: the main file, then each `pipelines_path` file, as written but
 * with every literal secret and every credential inside a URL redacted (never uploaded); and the
 * redacted keys (`file: path`).
 */
async function localConfigText(files: string[]): Promise<{ text: string; redacted: string[] }> {
  const read = await Promise.all(
    files.map(async (f) => redactConfigText(await Deno.readTextFile(f))),
  );
  const base = files[0].slice(0, files[0].lastIndexOf("/"));
  const redacted = read.flatMap((r, i) =>
    r.redactions.map((x) => `${relative(base, files[i])}: ${x.path}`)
  );
  const texts = read.map((r) => r.text);
  if (texts.length === 1) return { text: texts[0], redacted };
  const text = texts.map((t, i) =>
    i === 0 ? t : `\n# ---- ${relative(base, files[i])} (pipelines_path) ----\n${t}`
  ).join("\n");
  return { text, redacted };
}

/**
 * The management API's listener across reloads: started, moved or stopped as `[management]` says,
 * behind the same slow-client guard as the data plane. Its bearer token is read again on every
 * reload (a rotated `token_file` takes effect); a token that cannot be read fails the start, and on
 * a reload keeps the previous one. A discovery file tells local tools (gwcli) where it is.
 */
import { resolve } from "node:path";
import type { GatewayConfig } from "../../shared/gateway_config/mod.ts";
import { isLoopbackAddress } from "../../shared/gateway_config/mod.ts";
import {
  discoveryPath,
  type Logger,
  type ManagementDiscovery,
  removeIfExists,
  writeFileAtomic,
} from "../../shared/mod.ts";
import { DEFAULT_GUARD, guardedServe, type GuardedServer } from "../../shared/net/mod.ts";
import {
  createManagementApp,
  type GatewayControl,
  type ManagementToken,
  normalizePrefix,
  type ResolvedRoleToken,
  resolveManagementToken,
  resolveRoleTokens,
} from "../management/mod.ts";
import type { ComponentHealth } from "../observability/mod.ts";

interface Running {
  key: string;
  server: GuardedServer;
  /** The discovery file written for local tools (removed on shutdown), if any. */
  discovery?: string;
}

/** The management API listener of a gateway. */
export class ManagementListener {
  readonly #control: GatewayControl;
  readonly #logger: Logger;
  readonly #env: (name: string) => string | undefined;
  readonly #health: ComponentHealth | undefined;
  #running: Running | undefined;
  #token: ManagementToken | undefined;
  #allowedHosts: readonly string[] = [];
  #roleTokens: readonly ResolvedRoleToken[] = [];

  constructor(o: {
    control: GatewayControl;
    logger: Logger;
    env: (name: string) => string | undefined;
    /** Hears of a generated token that a full disk kept from being saved. */
    health?: ComponentHealth;
  }) {
    this.#control = o.control;
    this.#logger = o.logger;
    this.#env = o.env;
    this.#health = o.health;
  }

  /** Port of the listener, if running. */
  port(): number | undefined {
    return this.#running?.server.addr.port;
  }

  /** Start, move or stop the listener as `config` says; `baseDir` resolves its files. */
  async sync(config: GatewayConfig, baseDir: string): Promise<void> {
    const m = config.management;
    const wasUnsaved = this.#token?.unsaved !== undefined;
    try {
      this.#token = await resolveManagementToken({
        env: this.#env,
        tokenFile: m.token_file ? resolve(baseDir, m.token_file) : undefined,
        stateDir: resolve(baseDir, config.cloud.state_dir ?? "state"),
        unsaved: this.#token?.unsaved ? this.#token.token : undefined,
      });
    } catch (err) {
      if (!this.#token) throw err;
      this.#logger.error("management token unchanged", { error: (err as Error).message });
    }
    try {
      this.#roleTokens = await resolveRoleTokens(
        m.tokens,
        this.#token.token,
        (file) => resolve(baseDir, file),
      );
    } catch (err) {
      if (!this.#running) throw err;
      this.#logger.error("management role tokens unchanged", { error: (err as Error).message });
    }
    if (this.#token.unsaved) this.#health?.degraded("management_token", this.#token.unsaved);
    else this.#health?.recovered("management_token");
    this.#allowedHosts = m.allowed_hosts ?? [];
    const tls = m.tls_cert_path && m.tls_key_path
      ? {
        cert: await Deno.readTextFile(resolve(baseDir, m.tls_cert_path)),
        key: await Deno.readTextFile(resolve(baseDir, m.tls_key_path)),
      }
      : undefined;
    const key = m.enabled ? `${m.bind}:${m.port}:${m.tls_cert_path}:${m.tls_key_path}` : "";
    if (this.#running?.key === key) {
      // A token saved at last: local tools may now be told where it is.
      if (wasUnsaved && !this.#token.unsaved && !this.#running.discovery) {
        this.#running.discovery = await this.#writeDiscovery(
          m,
          this.#running.server.addr.port,
          !!tls,
        );
      }
      return;
    }
    const old = this.#running;
    this.#running = undefined;
    if (old?.discovery) await removeIfExists(old.discovery);
    if (m.enabled) {
      // The same address cannot be bound twice without reusePort: close first in that case.
      if (old && old.server.addr.port === m.port) await old.server.shutdown();
      const app = createManagementApp(
        this.#control,
        this.#logger.child({ component: "management" }),
        {
          token: () => this.#token!.token,
          tokens: () => this.#roleTokens,
          allowedHosts: () => this.#allowedHosts,
        },
      );
      // Behind the slow-client guard like the data plane (shared/net), with its defaults.
      const server = guardedServe(
        { hostname: m.bind, port: m.port, tls, guard: DEFAULT_GUARD },
        (req, info) => app.fetch(req, info),
      );
      this.#running = { key, server };
      this.#running.discovery = await this.#writeDiscovery(m, server.addr.port, !!tls);
    }
    if (old && old.server.addr.port !== m.port) await old.server.shutdown();
  }

  /**
   * Stop the listener and remove its discovery file. Its clients get `graceMs` (default: no
   * limit) to finish, like the data listeners' (`[runtime] shutdown_grace_secs`); then what is
   * left is closed, so that no client (a trickled body, an idle keep-alive connection, a slow
   * reader) holds a shutdown.
   */
  async shutdown(graceMs?: number): Promise<void> {
    const running = this.#running;
    this.#running = undefined;
    await running?.server.shutdown(graceMs);
    if (running?.discovery) await removeIfExists(running.discovery);
  }

  /**
   * Tells local tools (gwcli) where the API and its token file are; skipped when the token comes
   * from the environment (there is no file to name) or there is no home directory.
   */
  async #writeDiscovery(
    m: GatewayConfig["management"],
    port: number,
    tls: boolean,
  ): Promise<string | undefined> {
    // A token the disk did not take has no file to name yet.
    const file = this.#token?.unsaved ? undefined : this.#token?.file;
    const path = discoveryPath(port, this.#env);
    if (!file || !path) return undefined;
    const host = isLoopbackAddress(m.bind) || m.bind === "0.0.0.0" || m.bind === "::"
      ? "127.0.0.1"
      : m.bind.includes(":")
      ? `[${m.bind}]`
      : m.bind;
    const record: ManagementDiscovery = {
      url: `${tls ? "https" : "http"}://${host}:${port}`,
      prefix: normalizePrefix(m.prefix) || "admin",
      token_file: file,
      pid: Deno.pid,
    };
    try {
      await writeFileAtomic(path, JSON.stringify(record, null, 2) + "\n", { mode: 0o600 });
      return path;
    } catch (err) {
      this.#logger.debug("no management discovery file", { error: (err as Error).message });
      return undefined;
    }
  }
}

/**
 * The sync of one machine token with the cloud service. It first verifies the token (retrying
 * with backoff while the cloud cannot be reached), then runs three loops until stopped:
 *
 * - **config**: long-polls `GET /api/gateway/config` with the ETag of what runs; a new version
 *   has its transforms downloaded, is written to the managed file and applied through the
 *   gateway's own reload (loader, build, atomic swap); a refused one puts the previous managed
 *   file back so the running configuration stays; both outcomes go to `POST .../config/apply`.
 * - **status**: `POST /api/gateway/status` every `[cloud] status_interval_secs`.
 * - **renewal**: `POST /api/gateway/token/renew` once less than a third of the token's life is
 *   left; the new token replaces the old one (and its state file).
 *
 * Errors back off with jitter. A 401 from the cloud, or a token past `expires_at`, ends the sync
 * through `onRejected`: no more calls until a new token arrives.
 */
import type { ConfigProblem, GatewayConfig } from "../../shared/gateway_config/mod.ts";
import type { Logger } from "../../shared/mod.ts";
import type { CloudMetrics } from "../observability/mod.ts";
import { Backoff, sleep } from "./backoff.ts";
import {
  type ApplyError,
  type CloudClient,
  CloudHttpError,
  CloudUnreachableError,
  type PulledConfig,
} from "./client.ts";
import type { Clock } from "./clock.ts";
import { TokenRejectedError, type TokenVerifier } from "./jwt.ts";
import { type ManagedConfigFiles, managedText } from "./managed_config.ts";
import { renewalTime } from "./renewal.ts";
import { statusReport, type StatusSource } from "./status_report.ts";
import type { SyncStatus } from "./sync_status.ts";
import { checkPayloadLocally, verifyWithCloud } from "./token_checks.ts";
import type { MachineTokenStore } from "./token_store.ts";
import { syncTransforms, type TransformFetcher } from "./transforms.ts";
import type { CloudSettings } from "./settings.ts";

/** Seconds a config pull waits for a change (the cloud's maximum). */
export const LONG_POLL_SECS = 60;

/** The running gateway as the sync needs it. */
export interface SyncHost extends StatusSource {
  /** The configuration serving traffic. */
  config(): GatewayConfig;
  /** Reloads from the files as they are now (after any reload already running). */
  reloadNow(): Promise<{ ok: boolean; errors?: ConfigProblem[] }>;
}

/** Everything a sync works with. */
export interface SyncDeps {
  settings: CloudSettings;
  client: CloudClient;
  verifier: TokenVerifier;
  store: MachineTokenStore;
  files: ManagedConfigFiles;
  fetcher: TransformFetcher;
  host: SyncHost;
  metrics: CloudMetrics;
  logger: Logger;
  clock: Clock;
  status: SyncStatus;
  /** The cloud refused the token (or it expired): the caller drops it. */
  onRejected(reason: string): Promise<void>;
  /** Seconds of one long poll (default {@link LONG_POLL_SECS}). */
  pollWaitSecs?: number;
  /** How often the renewal loop looks at the clock (default one minute). */
  renewalCheckMs?: number;
  random?: () => number;
}

/** One running sync; `stop()` ends it. */
export class CloudSync {
  readonly #d: SyncDeps;
  readonly #abort = new AbortController();
  #done: Promise<void> | undefined;
  #rejected = false;

  constructor(deps: SyncDeps) {
    this.#d = deps;
  }

  /** Starts the loops (once). */
  start(): void {
    this.#done ??= this.#run().catch((err) => {
      this.#d.logger.error("cloud sync stopped by an unexpected error", { error: err as Error });
    });
  }

  /** Stops every loop and waits for them (an apply in progress finishes first). */
  async stop(): Promise<void> {
    this.#abort.abort();
    await this.#done;
  }

  get #signal(): AbortSignal {
    return this.#abort.signal;
  }

  #token(): string | undefined {
    return this.#d.store.current?.payload.machine_token;
  }

  #now(): string {
    return new Date(this.#d.clock.now()).toISOString();
  }

  #error(message: string): void {
    this.#d.status.last_error = { at: this.#now(), message };
  }

  async #run(): Promise<void> {
    const s = this.#d.status;
    s.state = "verifying";
    if (!await this.#verify()) {
      if (!this.#rejected) s.state = "stopped";
      return;
    }
    s.state = "running";
    await Promise.all([this.#configLoop(), this.#statusLoop(), this.#renewalLoop()]);
    if (!this.#rejected) s.state = "stopped";
  }

  /** The cloud refused the token: stop everything and let the owner drop it. */
  async #reject(reason: string): Promise<void> {
    if (this.#rejected || this.#signal.aborted) return;
    this.#rejected = true;
    this.#d.status.state = "unauthorized";
    this.#error(reason);
    this.#abort.abort();
    await this.#d.onRejected(reason);
  }

  /** Handles a failed call: true when the loop should go on (after backing off). */
  async #failed(what: string, err: unknown, backoff: Backoff, quietAfter = 1): Promise<boolean> {
    if (this.#signal.aborted) return false;
    if (err instanceof TokenRejectedError) {
      await this.#reject(err.message);
      return false;
    }
    if (err instanceof CloudHttpError && err.status === 401) {
      await this.#reject(`the cloud service refused the machine token: ${err.message}`);
      return false;
    }
    const message = err instanceof CloudHttpError || err instanceof CloudUnreachableError
      ? err.message
      : `unexpected error: ${(err as Error)?.message ?? String(err)}`;
    this.#error(`${what}: ${message}`);
    const delay = err instanceof CloudHttpError && err.retryAfterSecs
      ? err.retryAfterSecs * 1000
      : backoff.next();
    // The first failure of a run is a warning; repeats are debug (the state is in info/metrics).
    const log = backoff.attempts <= quietAfter ? "warn" : "debug";
    this.#d.logger[log](`cloud ${what} failed; retrying`, {
      error: message,
      retry_in_ms: delay,
      ...(err instanceof CloudHttpError ? { status: err.status, code: err.code } : {}),
    });
    await sleep(delay, this.#signal);
    return !this.#signal.aborted;
  }

  /** Checks the held token with the cloud once; false when the sync must end. */
  async #verify(): Promise<boolean> {
    const backoff = new Backoff(1_000, 60_000, this.#d.random);
    while (!this.#signal.aborted) {
      const held = this.#d.store.current;
      if (!held) return false;
      if (this.#d.clock.now() >= Date.parse(held.payload.expires_at)) {
        await this.#reject(`the machine token expired at ${held.payload.expires_at}`);
        return false;
      }
      if (held.verified) return true;
      try {
        await verifyWithCloud(held.payload, this.#d.verifier, this.#d.client);
        this.#d.store.markVerified(held.payload.machine_token);
        this.#d.metrics.contact(this.#d.clock.now());
        this.#d.logger.info("machine token verified with the cloud service", {
          gateway_id: held.payload.gateway_id,
          gateway_code: held.payload.gateway_code,
          expires_at: held.payload.expires_at,
        });
        return true;
      } catch (err) {
        if (!await this.#failed("token verification", err, backoff)) return false;
      }
    }
    return false;
  }

  async #configLoop(): Promise<void> {
    const d = this.#d;
    const backoff = new Backoff(1_000, 60_000, d.random);
    while (!this.#signal.aborted) {
      const token = this.#token();
      if (!token) return;
      try {
        const pulled = await d.client.pullConfig(
          token,
          d.status.etag,
          d.pollWaitSecs ?? LONG_POLL_SECS,
          this.#signal,
        );
        d.metrics.contact(d.clock.now());
        d.status.last_pull_at = this.#now();
        backoff.reset();
        if (!pulled) {
          d.metrics.configPull("not_modified");
          continue;
        }
        await this.#apply(pulled, token);
      } catch (err) {
        if (!this.#signal.aborted) d.metrics.configPull("error");
        if (!await this.#failed("configuration pull", err, backoff)) return;
      }
    }
  }

  /** Applies one pulled configuration and reports the outcome. */
  async #apply(pulled: PulledConfig, token: string): Promise<void> {
    const d = this.#d;
    const log = { version: pulled.version, etag: pulled.etag };
    d.logger.info("cloud configuration received", { ...log, pipelines: pulled.pipelines });
    let errors: ApplyError[] = [];
    let text: string | undefined;
    try {
      text = managedText(pulled.toml, pulled.version, pulled.etag);
    } catch (err) {
      errors.push({ message: `the configuration is not valid TOML: ${(err as Error).message}` });
    }
    if (text !== undefined) {
      errors = await syncTransforms(
        d.host.config().transforms_path,
        pulled.transforms.map((t) => ({ id: t.id, sha256: t.sha256 })),
        d.fetcher,
        this.#signal,
      );
    }
    let previous: string | undefined;
    if (text !== undefined && errors.length === 0) {
      try {
        previous = await d.files.read();
        await d.files.write(text);
      } catch (err) {
        errors.push({
          message: `cannot write ${d.files.configPath}: ${(err as Error).message} ` +
            "(set [cloud] state_dir to a writable directory)",
        });
      }
    }
    if (text !== undefined && errors.length === 0) {
      const outcome = await d.host.reloadNow();
      if (outcome.ok) {
        await d.files.writeState({
          version: pulled.version,
          etag: pulled.etag,
          applied_at: this.#now(),
        }).catch((err) =>
          d.logger.warn("cannot record the sync state", { error: (err as Error).message })
        );
        d.status.config_version = pulled.version;
        d.metrics.configVersion(pulled.version);
      } else {
        // Put the file of the running configuration back, so a restart runs the same thing.
        await d.files.write(previous).catch((err) =>
          d.logger.error("cannot restore the previous cloud configuration file", {
            file: d.files.configPath,
            error: (err as Error).message,
          })
        );
        errors = (outcome.errors ?? []).map((p) => ({
          path: p.path,
          message: `${p.file}${p.line ? `:${p.line}` : ""}: ${p.message}`,
        }));
        if (errors.length === 0) errors.push({ message: "the reload failed" });
      }
    }
    // The same version is not pulled again, applied or not: the cloud answers when it changes.
    d.status.etag = pulled.etag;
    const status = errors.length ? "failed" : "applied";
    d.metrics.configPull(status);
    d.status.last_apply = { version: pulled.version, status, errors, at: this.#now() };
    if (status === "applied") d.logger.info("cloud configuration applied", log);
    else {
      d.logger.error("cloud configuration refused: the running configuration stays", {
        ...log,
        problems: errors.map((e) => (e.path ? `${e.path}: ` : "") + e.message),
      });
    }
    await this.#report(token, {
      version: pulled.version,
      status,
      errors: errors.slice(0, 100).map((e) => ({
        ...(e.path ? { path: e.path.slice(0, 500) } : {}),
        message: e.message.slice(0, 2000),
      })),
    });
  }

  async #report(
    token: string,
    report: { version: number; status: "applied" | "failed"; errors: ApplyError[] },
  ): Promise<void> {
    const backoff = new Backoff(1_000, 30_000, this.#d.random);
    for (let attempt = 0; attempt < 5 && !this.#signal.aborted; attempt++) {
      try {
        await this.#d.client.reportApply(token, report, this.#signal);
        return;
      } catch (err) {
        if (!await this.#failed("apply report", err, backoff)) return;
      }
    }
  }

  async #statusLoop(): Promise<void> {
    const d = this.#d;
    const backoff = new Backoff(5_000, d.settings.statusIntervalMs, d.random);
    while (!this.#signal.aborted) {
      const token = this.#token();
      if (!token) return;
      try {
        // The report says how things were at least as late as this: an apply that ends while it
        // is on its way must not look reported.
        const at = this.#now();
        await d.host.collectMetrics?.();
        const body = statusReport(
          d.host,
          d.status.config_version,
          d.status.last_apply?.status === "failed",
          d.clock.now(),
        );
        await d.client.reportStatus(token, body, this.#signal);
        d.metrics.statusReport(true);
        d.metrics.contact(d.clock.now());
        d.status.last_status_report_at = at;
        backoff.reset();
        await sleep(d.settings.statusIntervalMs, this.#signal);
      } catch (err) {
        if (!this.#signal.aborted) d.metrics.statusReport(false);
        if (!await this.#failed("status report", err, backoff)) return;
      }
    }
  }

  async #renewalLoop(): Promise<void> {
    const d = this.#d;
    const backoff = new Backoff(5_000, 15 * 60_000, d.random);
    const checkMs = d.renewalCheckMs ?? 60_000;
    while (!this.#signal.aborted) {
      const held = d.store.current;
      if (!held) return;
      const now = d.clock.now();
      if (now >= Date.parse(held.payload.expires_at)) {
        await this.#reject(
          `the machine token expired at ${held.payload.expires_at} and could not be renewed`,
        );
        return;
      }
      const due = renewalTime(held.payload, d.settings.renewBeforeMs);
      if (now < due) {
        // On the clock: a test's manual clock wakes the check when it moves.
        await sleep(Math.min(due - now, checkMs), this.#signal, d.clock);
        continue;
      }
      try {
        const answer = await d.client.renew(held.payload.machine_token, this.#signal);
        const check = checkPayloadLocally(answer, d.settings, d.clock.now());
        if (!check.ok) {
          throw new Error(`the renewed token is invalid: ${check.problems.join("; ")}`);
        }
        await d.verifier.machineToken(check.payload.machine_token);
        const stored = await d.store.set(check.payload, "renewal", true);
        d.metrics.tokenRenewal(true);
        d.metrics.token(Date.parse(check.payload.expires_at));
        d.metrics.contact(d.clock.now());
        d.status.last_renewal_at = this.#now();
        backoff.reset();
        d.logger.info("machine token renewed", {
          expires_at: check.payload.expires_at,
          persisted: stored.persisted,
        });
      } catch (err) {
        if (!this.#signal.aborted) d.metrics.tokenRenewal(false);
        if (!await this.#failed("token renewal", err, backoff)) return;
      }
    }
  }
}

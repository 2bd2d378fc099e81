/**
 * Delivery of notices, one bounded queue per channel: `enqueue` never waits (a full queue drops
 * its oldest notice, counted), and each channel sends one notice at a time with the channel's
 * timeout, retrying a failed one `retries` times with back-off on the Clock before dropping it
 * (counted and logged without secrets). A webhook that is down never blocks the evaluation or
 * another channel, and nothing it does can throw out of here.
 */
import type { AlertChannelConfig } from "../../shared/gateway_config/mod.ts";
import { type Clock, type Logger, sleep } from "../../shared/mod.ts";
import type { Notice, Sender } from "./types.ts";

/** Outcomes counted per channel (`gateway_alert_notices_total{channel,outcome}`). */
export type NoticeOutcome = "sent" | "failed" | "dropped" | "retried";

/** Where the dispatcher counts its outcomes. */
export interface DispatchMetrics {
  notice(channel: string, outcome: NoticeOutcome): void;
}

/** One channel's figures, as `GET /{prefix}/alerts` shows them. */
export interface ChannelStatus {
  name: string;
  type: string;
  /** Notices waiting (the one being sent included). */
  queued: number;
  sent: number;
  failed: number;
  dropped: number;
  last_sent_at: string | null;
  /** The last failure (no secrets), or null. */
  last_error: string | null;
  last_error_at: string | null;
}

/** First back-off after a failed attempt; doubled per attempt up to MAX_BACKOFF_MS. */
const FIRST_BACKOFF_MS = 1_000;
const MAX_BACKOFF_MS = 60_000;

/** A channel's queue and its sending loop. */
class ChannelQueue {
  readonly status: ChannelStatus;
  #queue: Notice[] = [];
  #running = false;
  #closed = new AbortController();
  #idle: (() => void)[] = [];

  constructor(
    readonly config: AlertChannelConfig,
    readonly sender: Sender,
    readonly limit: number,
    readonly deps: { clock: Clock; logger: Logger; metrics?: DispatchMetrics },
  ) {
    this.status = {
      name: config.name,
      type: config.type,
      queued: 0,
      sent: 0,
      failed: 0,
      dropped: 0,
      last_sent_at: null,
      last_error: null,
      last_error_at: null,
    };
  }

  enqueue(notice: Notice): void {
    if (this.#closed.signal.aborted) return;
    if (this.#queue.length >= this.limit) {
      const dropped = this.#queue.shift()!;
      this.status.dropped++;
      this.deps.metrics?.notice(this.config.name, "dropped");
      this.deps.logger.warn("alert notice dropped: the channel's queue is full", {
        channel: this.config.name,
        rule: dropped.alert.rule,
        status: dropped.status,
        queue_size: this.limit,
      });
    }
    this.#queue.push(notice);
    this.status.queued = this.#queue.length + (this.#running ? 1 : 0);
    if (!this.#running) void this.#run();
  }

  async #run(): Promise<void> {
    this.#running = true;
    try {
      while (this.#queue.length && !this.#closed.signal.aborted) {
        const notice = this.#queue.shift()!;
        this.status.queued = this.#queue.length + 1;
        await this.#deliver(notice);
      }
    } finally {
      this.#running = false;
      this.status.queued = this.#queue.length;
      for (const resolve of this.#idle.splice(0)) resolve();
    }
  }

  /** Resolves once nothing waits and nothing is being sent (at once when idle). */
  whenIdle(): Promise<void> {
    if (!this.#running && this.#queue.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  async #deliver(notice: Notice): Promise<void> {
    const { clock, logger, metrics } = this.deps;
    for (let attempt = 0; attempt <= this.config.retries; attempt++) {
      if (this.#closed.signal.aborted) return;
      if (attempt > 0) {
        metrics?.notice(this.config.name, "retried");
        const backoff = Math.min(MAX_BACKOFF_MS, FIRST_BACKOFF_MS * 2 ** (attempt - 1));
        try {
          await sleep(clock, backoff, this.#closed.signal);
        } catch {
          return; // closed
        }
      }
      const signal = AbortSignal.any([
        this.#closed.signal,
        AbortSignal.timeout(this.config.timeout_secs * 1000),
      ]);
      try {
        await this.sender.send(notice, signal);
        this.status.sent++;
        this.status.last_sent_at = new Date(clock.now()).toISOString();
        metrics?.notice(this.config.name, "sent");
        logger.info("alert notice sent", {
          channel: this.config.name,
          rule: notice.alert.rule,
          status: notice.status,
          reminder: notice.reminder,
        });
        return;
      } catch (err) {
        this.status.last_error = (err as Error).message;
        this.status.last_error_at = new Date(clock.now()).toISOString();
        logger.warn("alert notice not delivered", {
          channel: this.config.name,
          rule: notice.alert.rule,
          attempt: attempt + 1,
          of: this.config.retries + 1,
          error: this.status.last_error,
        });
      }
    }
    this.status.failed++;
    metrics?.notice(this.config.name, "failed");
    logger.error("alert notice given up after its retries", {
      channel: this.config.name,
      rule: notice.alert.rule,
      status: notice.status,
      error: this.status.last_error,
    });
  }

  /** Stops sending: what waits is dropped (the gateway stops or the channel changed). */
  close(): void {
    this.#closed.abort();
    this.#queue = [];
    this.status.queued = 0;
    for (const resolve of this.#idle.splice(0)) resolve();
    try {
      this.sender.close();
    } catch {
      // a transport that fails to close holds nothing we need
    }
  }
}

/** The channels of the running `[alerts]`, rebuilt when their configuration changes. */
export class Dispatcher {
  readonly #deps: { clock: Clock; logger: Logger; metrics?: DispatchMetrics };
  readonly #makeSender: (channel: AlertChannelConfig) => Promise<Sender>;
  #channels = new Map<string, { key: string; queue: ChannelQueue }>();

  constructor(
    deps: { clock: Clock; logger: Logger; metrics?: DispatchMetrics },
    makeSender: (channel: AlertChannelConfig) => Promise<Sender>,
  ) {
    this.#deps = deps;
    this.#makeSender = makeSender;
  }

  /**
   * Takes the channels of a configuration: an unchanged channel keeps its queue and figures, a
   * changed one starts afresh, a removed one is closed. A channel whose sender cannot be made
   * (its CA file unreadable) is logged and left out.
   */
  async configure(channels: AlertChannelConfig[], queueSize: number): Promise<void> {
    const next = new Map<string, { key: string; queue: ChannelQueue }>();
    for (const channel of channels) {
      const key = JSON.stringify([channel, queueSize]);
      const existing = this.#channels.get(channel.name);
      if (existing?.key === key) {
        next.set(channel.name, existing);
        continue;
      }
      try {
        const sender = await this.#makeSender(channel);
        next.set(channel.name, {
          key,
          queue: new ChannelQueue(channel, sender, queueSize, this.#deps),
        });
      } catch (err) {
        this.#deps.logger.error("alert channel unusable: its notices are not sent", {
          channel: channel.name,
          error: (err as Error).message,
        });
      }
    }
    for (const [name, old] of this.#channels) {
      if (next.get(name) !== old) old.queue.close();
    }
    this.#channels = next;
  }

  /** Queues `notice` for `channel` (unknown channels are ignored); never waits. */
  enqueue(channel: string, notice: Notice): boolean {
    const c = this.#channels.get(channel);
    if (!c) return false;
    c.queue.enqueue(notice);
    return true;
  }

  /**
   * Resolves once every channel has sent (or given up) what it holds: a channel retrying on a
   * ManualClock waits for the clock to be moved.
   */
  async idle(): Promise<void> {
    await Promise.all([...this.#channels.values()].map((c) => c.queue.whenIdle()));
  }

  /** Every channel's figures. */
  status(): ChannelStatus[] {
    return [...this.#channels.values()].map((c) => ({ ...c.queue.status }));
  }

  /** Closes every channel. */
  close(): void {
    for (const c of this.#channels.values()) c.queue.close();
    this.#channels.clear();
  }
}

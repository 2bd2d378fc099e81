/**
 * `resources/subscribe` and `resources/unsubscribe` of one MCP session. A subscription to a
 * gateway's configuration (`gateway://{id}/configuration`) is told `notifications/resources/updated`
 * when the configuration the cloud serves to it gets a new version (a record change, a rollback, a
 * resume); one to `gateway://{id}/applied-configuration` when the gateway reports applying another
 * version. Changes are noticed through Deno KV watches on the team's revision and on each watched
 * gateway's reports, so they arrive whichever instance, API or UI made them.
 *
 * Any URI may be subscribed (a resource may be subscribed before it exists; the configuration
 * reference never changes); only those above are ever updated. A session holds at most
 * {@link MAX_SUBSCRIPTIONS}.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import type { UserPrincipal } from "../auth/mod.ts";
import { K } from "../store/mod.ts";
import type { Services } from "../services.ts";
import { principalOf } from "./results.ts";

/** Most subscriptions of one session. */
export const MAX_SUBSCRIPTIONS = 100;
/** Keys one Deno KV watch may hold. */
const KEYS_PER_WATCH = 10;

const GATEWAY_URI = /^gateway:\/\/([0-9a-f-]{36})\/(configuration|applied-configuration)$/;

/** The subscriptions of one session and the watches that serve them. */
export class ResourceSubscriptions {
  #s: Services;
  #server: McpServer;
  #uris = new Set<string>();
  #teamId: string | undefined;
  /** What each watched URI looked like when last checked (a version, or null). */
  #seen = new Map<string, number | null>();
  #readers: ReadableStreamDefaultReader<unknown>[] = [];
  #checking: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(s: Services, server: McpServer) {
    this.#s = s;
    this.#server = server;
  }

  /** Installs the request handlers on `server` and stops watching when the session closes. */
  install(): void {
    this.#server.server.setRequestHandler(
      SubscribeRequestSchema,
      (async (request: { params: { uri: string } }, extra: unknown) => {
        await this.subscribe(request.params.uri, principalOf(extra as never));
        return {};
      }) as never,
    );
    this.#server.server.setRequestHandler(
      UnsubscribeRequestSchema,
      (async (request: { params: { uri: string } }) => {
        await this.unsubscribe(request.params.uri);
        return {};
      }) as never,
    );
    this.#server.server.onclose = () => this.close();
  }

  /** Adds `uri` (idempotent). */
  async subscribe(uri: string, p: UserPrincipal): Promise<void> {
    if (this.#uris.has(uri)) return;
    if (this.#uris.size >= MAX_SUBSCRIPTIONS) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `at most ${MAX_SUBSCRIPTIONS} subscriptions per session: unsubscribe from some first`,
      );
    }
    this.#teamId ??= p.team.id;
    this.#uris.add(uri);
    if (!GATEWAY_URI.test(uri)) return;
    this.#seen.set(uri, await this.#current(uri));
    this.#rewatch();
  }

  /** Removes `uri` (no error when it was not subscribed). */
  unsubscribe(uri: string): Promise<void> {
    if (!this.#uris.delete(uri)) return Promise.resolve();
    if (this.#seen.delete(uri)) this.#rewatch();
    return Promise.resolve();
  }

  /** Ends every watch. */
  close(): void {
    this.#closed = true;
    this.#uris.clear();
    this.#seen.clear();
    this.#stopWatches();
  }

  /** The version a gateway URI shows now, or null (no such gateway in the team, nothing applied). */
  async #current(uri: string): Promise<number | null> {
    const [, gatewayId, what] = GATEWAY_URI.exec(uri)!;
    const teamId = this.#teamId!;
    const gw = await this.#s.resources.get("gateways", teamId, gatewayId);
    if (!gw) return null;
    if (what === "applied-configuration") {
      return (await this.#s.store.gatewayState.get(teamId, gw.id)).applied_version;
    }
    return (await this.#s.resources.gatewayConfig(teamId, gw.id)).version;
  }

  #stopWatches(): void {
    for (const reader of this.#readers) reader.cancel().catch(() => {});
    this.#readers = [];
  }

  /** Watches the team's revision and the reports of every watched gateway. */
  #rewatch(): void {
    this.#stopWatches();
    if (this.#closed || this.#seen.size === 0) return;
    const teamId = this.#teamId!;
    const gateways = new Set([...this.#seen.keys()].map((uri) => GATEWAY_URI.exec(uri)![1]));
    const keys: Deno.KvKey[] = [
      K.revision(teamId),
      ...[...gateways].map((id) => K.gatewayState(teamId, id)),
    ];
    for (let i = 0; i < keys.length; i += KEYS_PER_WATCH) {
      const reader = this.#s.store.kv.watch(keys.slice(i, i + KEYS_PER_WATCH)).getReader();
      this.#readers.push(reader);
      void this.#pump(reader);
    }
  }

  /** Checks the subscriptions after every change a watch reports (the first is the current state). */
  async #pump(reader: ReadableStreamDefaultReader<unknown>): Promise<void> {
    try {
      while (true) {
        const next = await reader.read();
        if (next.done || this.#closed) return;
        this.#checking = this.#checking.then(() => this.#check()).catch((err) => {
          this.#s.options.logger.warn("mcp subscription check failed", {
            error: (err as Error).message,
          });
        });
      }
    } catch {
      // The watch ended (session closed, service stopping).
    }
  }

  /** Sends `notifications/resources/updated` for every URI whose version moved. */
  async #check(): Promise<void> {
    for (const [uri, before] of [...this.#seen]) {
      if (this.#closed || !this.#seen.has(uri)) return;
      const now = await this.#current(uri);
      if (now === before) continue;
      this.#seen.set(uri, now);
      await this.#server.server.sendResourceUpdated({ uri }).catch(() => {});
    }
  }
}

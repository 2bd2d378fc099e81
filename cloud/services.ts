/** The service objects every route uses, built once per running service. */
import { KeyRing } from "./auth/mod.ts";
import { resolveKeyEncryptionKey } from "./auth/mod.ts";
import { Tokens } from "./auth/mod.ts";
import { RateLimiter } from "./rate_limit/mod.ts";
import type { CloudOptions } from "./options.ts";
import { InvitationService, ResourceService, ShareService, TeamService } from "./resources/mod.ts";
import { PreviewPool } from "./preview/mod.ts";
import { restrictKvFiles, Store } from "./store/mod.ts";
import { MACHINE_TOKEN_LIFETIME_MS } from "../shared/mod.ts";

/** Shared state of one running service. */
export interface Services {
  options: CloudOptions;
  store: Store;
  keys: KeyRing;
  jwt: Tokens;
  limiter: RateLimiter;
  resources: ResourceService;
  shares: ShareService;
  teams: TeamService;
  invitations: InvitationService;
  /** Aborted when the service stops (ends long polls). */
  shutdown: AbortSignal;
}

/** Builds the services over an open KV and makes sure a signing key exists. */
export async function createServices(
  options: CloudOptions,
  kv: Deno.Kv,
  shutdown: AbortSignal,
): Promise<Services> {
  const store = new Store(kv, options.clock);
  const longest = Math.max(MACHINE_TOKEN_LIFETIME_MS, options.userTokenTtlSeconds * 1000);
  const sealKey = await resolveKeyEncryptionKey({
    envKey: options.keyEncryptionKey,
    keyFile: options.keyEncryptionKeyFile,
    baseUrl: options.baseUrl,
    dataDir: options.dataDir,
    warn: (message) => options.logger.warn(message),
  });
  const keys = new KeyRing(store.signingKeys, options.clock, longest, sealKey);
  await keys.init();
  if (!options.managedKv) await restrictKvFiles(options);
  // JOLT previews run in workers with a deadline; they end with the service.
  const previews = new PreviewPool({
    deadlineMs: options.previewDeadlineMs,
    logger: options.logger,
  });
  shutdown.addEventListener("abort", () => previews.close(), { once: true });
  const resources = new ResourceService(store, options.baseUrl, options.clock, previews);
  return {
    options,
    store,
    keys,
    jwt: new Tokens(keys, options.clock, options.baseUrl),
    limiter: new RateLimiter(options.clock),
    resources,
    shares: new ShareService(store, resources),
    teams: new TeamService(store),
    invitations: new InvitationService(store, options.baseUrl, options.clock),
    shutdown,
  };
}

/** A channel's sender by its type: a webhook, or SMTP e-mail with its CA file read first. */
import type { AlertChannelConfig } from "../../shared/gateway_config/mod.ts";
import { emailSender } from "./email.ts";
import type { Sender } from "./types.ts";
import { webhookSender } from "./webhook.ts";

/** Largest CA file read. */
const MAX_CA_BYTES = 1024 * 1024;

/** The sender of `channel`; throws when its CA file cannot be read. */
export async function makeSender(channel: AlertChannelConfig): Promise<Sender> {
  if (channel.type === "webhook") return webhookSender(channel);
  let ca: string | undefined;
  if (channel.ca_path) {
    const info = await Deno.stat(channel.ca_path);
    if (info.size > MAX_CA_BYTES) throw new Error(`ca_path is larger than ${MAX_CA_BYTES} bytes`);
    ca = await Deno.readTextFile(channel.ca_path);
  }
  return emailSender(channel, ca);
}

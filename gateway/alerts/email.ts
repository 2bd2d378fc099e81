/**
 * The `email` channel: each notice is one plain-text mail sent with nodemailer over SMTP. With
 * `security = "starttls"` (the default) the server must offer STARTTLS and the session is
 * encrypted before AUTH or the message; `tls` speaks TLS from the first byte; `none` is plain
 * SMTP without credentials (a relay on loopback). The server's certificate is verified against
 * `ca_path` or the system's CAs. Errors are reported without the password or user.
 */
// nodemailer ships no types (and @types/nodemailer would bring an @types/node of its own into
// the whole program's type check): the part used here is typed below.
import { isIP } from "node:net";
import type { AlertChannelConfig } from "../../shared/gateway_config/mod.ts";
import { noticeBody, noticeTitle, withoutSecrets } from "./notice_text.ts";
import type { Notice, Sender } from "./types.ts";

/** What this module uses of a nodemailer SMTP transport. */
interface MailTransport {
  sendMail(mail: {
    from: string;
    to: string[];
    subject: string;
    text: string;
    headers: Record<string, string>;
  }): Promise<unknown>;
  close(): void;
}

/** The subject of a notice: the prefix, then the notice's title (one line, bounded). */
export function emailSubject(channel: AlertChannelConfig, notice: Notice): string {
  const prefix = channel.subject_prefix ?? "[gateway]";
  return `${prefix ? prefix + " " : ""}${noticeTitle(notice)}`.replace(/[\r\n]+/g, " ").slice(
    0,
    250,
  );
}

/** An e-mail channel's sender; `ca` is the PEM text of `ca_path` when set. */
export function emailSender(channel: AlertChannelConfig, ca?: string): Sender {
  // One connection per notice (nodemailer's default without `pool`): alerts are rare.
  const security = channel.security ?? "starttls";
  const timeoutMs = channel.timeout_secs * 1000;
  const options = {
    host: channel.host,
    port: channel.port ?? 587,
    secure: security === "tls",
    requireTLS: security === "starttls",
    ignoreTLS: security === "none",
    auth: channel.user !== undefined ? { user: channel.user, pass: channel.password } : undefined,
    tls: {
      ...(ca ? { ca } : {}),
      // SNI names a host, never an address (the certificate is then checked for the IP).
      ...(isIP(channel.host!) ? {} : { servername: channel.host }),
      minVersion: "TLSv1.2" as const,
    },
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
    // nodemailer's own logger stays off: it would print the SMTP dialogue (AUTH included).
    logger: false,
    debug: false,
  };
  // nodemailer is loaded with the first notice: a gateway without an e-mail channel, or one
  // whose alerts never fire, does not pay for loading it.
  let transport: Promise<MailTransport> | undefined;
  const connect = () =>
    transport ??= import("nodemailer").then(({ createTransport }) =>
      createTransport(options) as MailTransport
    );
  const secrets = [channel.password, channel.user];
  return {
    async send(notice, signal) {
      const sending = connect().then((t) =>
        t.sendMail({
          from: channel.from!,
          to: channel.to!,
          subject: emailSubject(channel, notice),
          text: noticeBody(notice),
          headers: {
            "X-Gateway-Alert": `${notice.status}; rule=${notice.alert.rule}; id=${notice.alert.id}`,
          },
        })
      );
      const aborted = new Promise<never>((_, reject) => {
        const stop = () => reject(new Error("timed out"));
        if (signal.aborted) stop();
        signal.addEventListener("abort", stop, { once: true });
      });
      try {
        await Promise.race([sending, aborted]);
      } catch (err) {
        sending.catch(() => {}); // its own timeouts end it
        const message = withoutSecrets((err as Error).message ?? String(err), secrets);
        throw new Error(`SMTP ${channel.host}:${channel.port}: ${message}`);
      }
    },
    close() {
      transport?.then((t) => t.close(), () => {});
    },
  };
}

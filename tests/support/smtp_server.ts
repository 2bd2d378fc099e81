/**
 * An SMTP server for tests: nodemailer's own `smtp-server` (npm) on a free loopback port, offering
 * STARTTLS with the given certificate (or not at all), optionally requiring AUTH, recording every
 * message with whether its session was encrypted and who authenticated.
 */
import { SMTPServer } from "smtp-server";
import { waitFor } from "./wait.ts";

/** One message received. */
export interface ReceivedMail {
  from: string;
  to: string[];
  /** The whole message (headers and body) as sent. */
  raw: string;
  /** The session was upgraded with STARTTLS before the message. */
  secure: boolean;
  /** The user that authenticated, if any. */
  user: string | undefined;
}

/** Options of {@link startSmtpServer}. */
export interface SmtpServerOptions {
  /** Certificate and key for STARTTLS; without them STARTTLS is not offered. */
  tls?: { cert: string; key: string };
  /** Required credentials; without them AUTH is not offered. */
  auth?: { user: string; password: string };
}

/** A running SMTP server. */
export interface SmtpTestServer {
  port: number;
  messages: ReceivedMail[];
  /** AUTH attempts refused. */
  refusedLogins: number;
  waitForCount(n: number, timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the server on a free loopback port. */
export async function startSmtpServer(options: SmtpServerOptions = {}): Promise<SmtpTestServer> {
  const messages: ReceivedMail[] = [];
  let refusedLogins = 0;
  const server = new SMTPServer({
    secure: false,
    disabledCommands: [
      ...(options.tls ? [] : ["STARTTLS"]),
      ...(options.auth ? [] : ["AUTH"]),
    ],
    ...(options.tls ? { key: options.tls.key, cert: options.tls.cert } : {}),
    authOptional: !options.auth,
    // AUTH only inside TLS (the default), as a real submission server.
    allowInsecureAuth: false,
    logger: false,
    onAuth(auth, _session, callback) {
      if (auth.username === options.auth?.user && auth.password === options.auth?.password) {
        return callback(null, { user: auth.username });
      }
      refusedLogins++;
      callback(new Error("invalid credentials"));
    },
    onData(stream, session, callback) {
      const chunks: Uint8Array[] = [];
      stream.on("data", (c: Uint8Array) => chunks.push(c));
      stream.on("end", () => {
        const raw = new TextDecoder().decode(
          chunks.reduce((all, c) => {
            const out = new Uint8Array(all.length + c.length);
            out.set(all);
            out.set(c, all.length);
            return out;
          }, new Uint8Array()),
        );
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : "",
          to: session.envelope.rcptTo.map((r) => r.address),
          raw,
          secure: session.secure === true,
          user: session.user,
        });
        callback(null);
      });
    },
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once("error", reject);
    server.listen(
      0,
      "127.0.0.1",
      () => resolve((server.server.address() as { port: number }).port),
    );
  });
  return {
    port,
    messages,
    get refusedLogins() {
      return refusedLogins;
    },
    waitForCount: (n, timeoutMs = 15_000) =>
      waitFor(() => Promise.resolve(messages.length >= n), {
        timeoutMs,
        description: `${n} mail(s) at the SMTP server`,
      }),
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

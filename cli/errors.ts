/** Errors that end a gwcli command with a message on stderr and a chosen exit code. */

/** Exit codes of gwcli (documented in docs/cli.md). */
export const EXIT = {
  /** Success. */
  ok: 0,
  /** The command failed (network, API error, bad local data). */
  failure: 1,
  /** Wrong usage: unknown command or option, conflicting options, invalid value. */
  usage: 2,
  /** Not logged in, or the stored user token is invalid or expired: run `gwcli login`. */
  auth: 3,
} as const;

/** An expected failure: printed as `error: <message>` (and the hint) without a stack trace. */
export class CliError extends Error {
  /** Process exit code. */
  readonly exitCode: number;
  /** A line telling the user what to do next, printed after the message. */
  readonly hint?: string;

  constructor(
    message: string,
    options: { exitCode?: number; hint?: string; cause?: unknown } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "CliError";
    this.exitCode = options.exitCode ?? EXIT.failure;
    this.hint = options.hint;
  }
}

/** A usage error (exit code 2). */
export function usageError(message: string, hint?: string): CliError {
  return new CliError(message, { exitCode: EXIT.usage, hint });
}

/** An authentication error (exit code 3), advising `gwcli login` unless `hint` says otherwise. */
export function authError(message: string, hint = "Run `gwcli login` to log in."): CliError {
  return new CliError(message, { exitCode: EXIT.auth, hint });
}

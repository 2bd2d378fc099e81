/**
 * The management API's bearer token: from `GATEWAY_MANAGEMENT_TOKEN`, from `[management]
 * token_file`, or generated at first start into `<state_dir>/management-token` (0600) and reused
 * on later starts. A token shorter than {@link MIN_TOKEN_LENGTH} characters is refused: the
 * token is the only thing between a local process (or a browser page, were the Origin check to
 * fail) and the control of the gateway.
 */
import { Buffer } from "node:buffer";
import { writeFileAtomic } from "../../shared/mod.ts";
import { describeDiskError, diskErrorCode } from "../disk/mod.ts";

/** Environment variable that sets the token (it wins over `token_file`). */
export const MANAGEMENT_TOKEN_ENV = "GATEWAY_MANAGEMENT_TOKEN";
/** Name of the generated token file in the state directory. */
export const GENERATED_TOKEN_FILE = "management-token";
/** Shortest token accepted. */
export const MIN_TOKEN_LENGTH = 32;

/** The token and where it came from. */
export interface ManagementToken {
  token: string;
  /** `environment`, `token_file` or `generated`. */
  source: "environment" | "token_file" | "generated";
  /** The file holding it (absent for the environment). */
  file?: string;
  /**
   * Set when a generated token could not be saved because the disk refuses writes: why. The
   * token then lives in this process only (`file` is where it will be saved on a later reload).
   */
  unsaved?: string;
}

/** Where to look. */
export interface TokenInputs {
  env: (name: string) => string | undefined;
  /** `[management] token_file`, already resolved to an absolute path. */
  tokenFile?: string;
  /** The gateway's state directory (absolute). */
  stateDir: string;
  /** A token generated earlier that could not be saved: saved now, rather than a new one. */
  unsaved?: string;
}

function checked(token: string, where: string): string {
  if (token.length < MIN_TOKEN_LENGTH) {
    throw new Error(
      `${where}: the management token must be at least ${MIN_TOKEN_LENGTH} characters ` +
        "(generate one with `openssl rand -base64 32`)",
    );
  }
  if (/\s/.test(token)) throw new Error(`${where}: the management token must not contain spaces`);
  return token;
}

/** Reads or creates the token. Errors name the variable or file at fault. */
export async function resolveManagementToken(inputs: TokenInputs): Promise<ManagementToken> {
  const fromEnv = inputs.env(MANAGEMENT_TOKEN_ENV)?.trim();
  if (fromEnv) return { token: checked(fromEnv, MANAGEMENT_TOKEN_ENV), source: "environment" };
  if (inputs.tokenFile) {
    let text: string;
    try {
      text = await Deno.readTextFile(inputs.tokenFile);
    } catch (err) {
      throw new Error(
        `[management] token_file ${inputs.tokenFile}: cannot read it (${(err as Error).message})`,
      );
    }
    return {
      token: checked(text.trim(), `[management] token_file ${inputs.tokenFile}`),
      source: "token_file",
      file: inputs.tokenFile,
    };
  }
  const file = `${inputs.stateDir}/${GENERATED_TOKEN_FILE}`;
  try {
    const text = (await Deno.readTextFile(file)).trim();
    return { token: checked(text, file), source: "generated", file };
  } catch (err) {
    if (!(err instanceof Deno.errors.NotFound)) throw err;
  }
  const token = inputs.unsaved ??
    Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url");
  try {
    await writeFileAtomic(file, `${token}\n`, { mode: 0o600 });
  } catch (err) {
    const disk = diskErrorCode(err);
    // A full or failing disk does not keep the gateway from starting: the token is kept in
    // memory (the data plane serves; the API needs the file) and saved again on a reload.
    if (disk) {
      return {
        token,
        source: "generated",
        file,
        unsaved: `cannot save the generated management token to ${file}: ${
          describeDiskError(disk)
        }; free space and reload, or set ${MANAGEMENT_TOKEN_ENV}`,
      };
    }
    throw new Error(
      `cannot write the generated management token to ${file} (${(err as Error).message}); ` +
        `set [cloud] state_dir to a writable directory, or set ${MANAGEMENT_TOKEN_ENV}`,
    );
  }
  return { token, source: "generated", file };
}

/** A `[management.tokens.<name>]` token, read. */
export interface ResolvedRoleToken {
  name: string;
  role: "viewer" | "operator" | "admin";
  token: string;
}

/**
 * Reads the `[management.tokens.<name>]` tokens: each from its `token` (already substituted from
 * `${VAR}`) or its `token_file` (resolved with `resolvePath`). Each must be at least
 * {@link MIN_TOKEN_LENGTH} characters and differ from every other one (the main token included):
 * a token stands for one role. Errors name the table at fault, never the token.
 */
export async function resolveRoleTokens(
  tokens: GatewayConfigTokens | undefined,
  mainToken: string,
  resolvePath: (file: string) => string,
): Promise<ResolvedRoleToken[]> {
  const out: ResolvedRoleToken[] = [];
  for (const t of Object.values(tokens ?? {})) {
    const where = `[management.tokens.${t.name}]`;
    let token: string;
    if (t.token !== undefined) {
      token = checked(t.token.trim(), `${where} token`);
    } else if (t.token_file !== undefined) {
      const file = resolvePath(t.token_file);
      let text: string;
      try {
        text = await Deno.readTextFile(file);
      } catch (err) {
        throw new Error(`${where} token_file ${file}: cannot read it (${(err as Error).message})`);
      }
      token = checked(text.trim(), `${where} token_file ${file}`);
    } else {
      throw new Error(`${where}: set token (as \${VAR}) or token_file`);
    }
    if (token === mainToken || out.some((o) => o.token === token)) {
      throw new Error(`${where}: the token is the same as another management token's`);
    }
    out.push({ name: t.name, role: t.role, token });
  }
  return out;
}

/** `[management] tokens` as the typed configuration holds it. */
type GatewayConfigTokens = Record<
  string,
  { name: string; role: "viewer" | "operator" | "admin"; token?: string; token_file?: string }
>;

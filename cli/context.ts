/** What every command works with: environment, output, HTTP, local files, browser, prompts. */
import { type BrowserOpener, systemBrowser } from "./browser.ts";
import {
  type ConfigFile,
  readConfigFile,
  resolveConfigValue,
  type ResolvedValue,
} from "./config.ts";
import type { Env } from "./env.ts";
import { type FetchFn, HttpClient } from "./http.ts";
import { type Instance, loadInstances, saveInstances } from "./instances.ts";
import { Output, type Sinks } from "./output.ts";
import { type GwcliPaths, resolvePaths } from "./paths.ts";
import { type Prompter, terminalPrompter } from "./prompt.ts";
import type { SecretBackend } from "./secret_backend.ts";
import { SecureStore } from "./secure_store.ts";

/** What the process (or a test) gives gwcli. */
export interface CliDeps {
  env: Env;
  sinks: Sinks;
  /** Colours in tables. */
  color?: boolean;
  /** stderr is a terminal: progress bars redraw one line (else they print a line per quarter). */
  terminal?: boolean;
  fetch?: FetchFn;
  openBrowser?: BrowserOpener;
  prompter?: Prompter;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
  /** Opens the OS keychain (tests pass a fake). */
  keychain?: () => Promise<SecretBackend>;
}

/** The context of one gwcli run. */
export class CliContext {
  readonly env: Env;
  readonly out: Output;
  readonly http: HttpClient;
  /** Raw fetch (downloads). */
  readonly fetch: FetchFn;
  readonly openBrowser: BrowserOpener;
  readonly prompter: Prompter;
  readonly sleep: (ms: number) => Promise<void>;
  readonly now: () => number;
  #deps: CliDeps;
  #paths?: GwcliPaths;

  constructor(deps: CliDeps) {
    this.#deps = deps;
    this.env = deps.env;
    this.out = new Output(deps.sinks, deps.color ?? false, deps.terminal ?? false);
    this.fetch = deps.fetch ?? fetch;
    this.http = new HttpClient(this.out, this.fetch);
    this.openBrowser = deps.openBrowser ?? systemBrowser(deps.env);
    this.prompter = deps.prompter ?? terminalPrompter();
    this.sleep = deps.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.now = deps.now ?? (() => Date.now());
  }

  /** The data directory's files (resolved on first use: `HOME` may be missing). */
  get paths(): GwcliPaths {
    return this.#paths ??= resolvePaths(this.env);
  }

  /** The content of `config.json`. */
  config(): Promise<ConfigFile> {
    return readConfigFile(this.paths.config);
  }

  /** The effective `api-url` and where it comes from. */
  async apiUrl(): Promise<ResolvedValue> {
    return resolveConfigValue("api-url", await this.config(), this.env, this.paths.config);
  }

  /** The secure store of the user token. */
  store(apiUrl: string): SecureStore {
    return new SecureStore({
      paths: this.paths,
      env: this.env,
      out: this.out,
      apiUrl,
      keychain: this.#deps.keychain,
    });
  }

  /** The registered instances. */
  instances(): Promise<Instance[]> {
    return loadInstances(this.paths.instances);
  }

  /** Writes the registry. */
  saveInstances(list: Instance[]): Promise<void> {
    return saveInstances(this.paths.instances, list);
  }
}

/**
 * A private D-Bus session bus with an unlocked gnome-keyring Secret Service, as on a Linux
 * desktop: Debian `dbus-daemon` (package dbus) and `gnome-keyring-daemon` (package gnome-keyring).
 * The keyring's files live under `home`, so each test has its own.
 */
import { spawnCaptured } from "./process.ts";
import { waitFor } from "./wait.ts";

/** A running session bus with a Secret Service on it. */
export interface SecretService {
  /** Environment that puts a process on this bus (`DBUS_SESSION_BUS_ADDRESS`). */
  env: Record<string, string>;
  /** Stops the bus; gnome-keyring-daemon exits with it. */
  stop(): Promise<void>;
}

/** Starts the bus in `dir` and an unlocked login keyring for `home`. */
export async function startSecretService(dir: string, home: string): Promise<SecretService> {
  const socket = `${dir}/session-bus`;
  const address = `unix:path=${socket}`;
  const env = { HOME: home, PATH: Deno.env.get("PATH") ?? "/usr/bin:/bin" };
  const bus = spawnCaptured("dbus-daemon", ["--session", "--nofork", `--address=${address}`], {
    env,
  });
  try {
    await waitFor(() => Deno.stat(socket).then(() => true, () => false), {
      timeoutMs: 10_000,
      description: "the D-Bus session bus socket",
    });
    // --unlock reads the login keyring's password from stdin and creates the keyring if needed.
    const keyring = new Deno.Command("gnome-keyring-daemon", {
      args: ["--unlock", "--components=secrets"],
      env: { ...env, DBUS_SESSION_BUS_ADDRESS: address },
      clearEnv: true,
      stdin: "piped",
      stdout: "piped",
      stderr: "piped",
    }).spawn();
    const writer = keyring.stdin.getWriter();
    await writer.write(new TextEncoder().encode("test-password"));
    await writer.close();
    const out = await keyring.output();
    if (!out.success) {
      throw new Error(`gnome-keyring-daemon failed: ${new TextDecoder().decode(out.stderr)}`);
    }
  } catch (err) {
    await bus.stop();
    throw new Error(`${(err as Error).message}\n${bus.output()}`);
  }
  return {
    env: { DBUS_SESSION_BUS_ADDRESS: address },
    stop: async () => {
      await bus.stop();
    },
  };
}

/**
 * The listening TCP sockets of each isolate, and shutting down those of a frozen one (Linux).
 *
 * Every isolate opens its own socket on a shared port (SO_REUSEPORT) and the kernel spreads new
 * connections over them, a frozen isolate's socket included. Deno 2.9 cannot stop a worker stuck
 * in JavaScript (`Worker.terminate()` takes effect only when its event loop turns again) nor close
 * another isolate's resource. So each isolate notes the sockets its listeners create (the
 * process's listening sockets before and after the listen, under a lock the isolates share), as
 * `<descriptor>:<cookie>` (SO_COOKIE is unique for the socket's life, so a descriptor number
 * reused later is never taken for it), and the main thread shuts a frozen isolate's sockets down
 * through FFI (libc.ts): `shutdown(2)` of a listening socket takes it out of the port's group at
 * once (connections waiting in its accept queue are reset) and the frozen thread closes it
 * whenever it runs again. Everything here goes through the C library because Deno refuses its own
 * file APIs on /proc/self without `--allow-all`.
 */
import { libc } from "./libc.ts";

/** Longest wait for another isolate's listen (the lock is held for a few milliseconds). */
const LOCK_WAIT_MS = 1_000;

/** Bytes of the shared lock `noteListen` takes. */
export const LISTEN_LOCK_BYTES = 4;

/**
 * The listening TCP sockets of the process on `port` (any port without it), as
 * `<descriptor>:<cookie>`; undefined: unknown (not Linux, or no `--allow-ffi` for the library).
 */
export function listeningInodes(port?: number): Set<string> | undefined {
  const c = libc();
  if (typeof c === "string") return undefined;
  const sockets = c.listeningSockets(port);
  if (!sockets) return undefined;
  return new Set([...sockets].map(([fd, cookie]) => `${fd}:${cookie}`));
}

/** The descriptor of a socket id when it still names the same listening socket. */
function liveDescriptor(id: string): number | undefined {
  const c = libc();
  if (typeof c === "string") return undefined;
  const [fd, cookie] = id.split(":");
  return c.listeningCookie(Number(fd))?.toString() === cookie ? Number(fd) : undefined;
}

/**
 * Runs `open` (which starts a listener) and returns what it returned with the inodes of the
 * listening sockets it created on `portOf(value)`. `lock` (shared by the isolates) keeps another
 * isolate's listen on the same port out of the difference.
 */
export function noteListen<T>(
  lock: Int32Array | undefined,
  open: () => T,
  portOf: (value: T) => number,
): { value: T; inodes: string[] } {
  let held = false;
  if (lock) {
    const deadline = performance.now() + LOCK_WAIT_MS;
    while (!(held = Atomics.compareExchange(lock, 0, 0, 1) === 0)) {
      // Another isolate is between its two reads: a few milliseconds.
      if (performance.now() > deadline) break;
    }
  }
  try {
    const before = listeningInodes();
    const value = open();
    const after = before ? listeningInodes(portOf(value)) : undefined;
    const inodes = after ? [...after].filter((i) => !before!.has(i)) : [];
    return { value, inodes };
  } finally {
    if (held) Atomics.store(lock!, 0, 0);
  }
}

/** Those of `inodes` (socket ids) that are still listening sockets; undefined: unknown. */
export function stillListening(inodes: readonly string[]): string[] | undefined {
  if (typeof libc() === "string") return undefined;
  return inodes.filter((id) => liveDescriptor(id) !== undefined);
}

/**
 * Shuts the listening sockets `inodes` (socket ids) down, whichever isolate owns them. Returns
 * how many were shut down, or why none could be.
 */
export function shutDownSockets(inodes: readonly string[]): { closed: number; error?: string } {
  if (inodes.length === 0) return { closed: 0, error: "its listening sockets are not known" };
  const c = libc();
  if (typeof c === "string") return { closed: 0, error: c };
  let closed = 0;
  for (const id of inodes) {
    const fd = liveDescriptor(id);
    if (fd !== undefined && c.shutdown(fd)) closed++;
  }
  return closed ? { closed } : { closed, error: "shutdown(2) refused its sockets" };
}

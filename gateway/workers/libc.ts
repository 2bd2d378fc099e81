/**
 * The C library calls the watchdog needs and Deno does not offer, through FFI (Linux): the
 * process's listening sockets (its descriptors from `opendir(3)` of /proc/self/fd, each checked
 * with `getsockopt(2)` SO_ACCEPTCONN and SO_COOKIE and `getsockname(2)`), `shutdown(2)` of a
 * listening socket whose worker thread is frozen, `_exit(2)` from the main thread's watchdog
 * thread, and a worker's kernel thread id (`gettid(2)`) with `access(2)` of its /proc/self/task
 * entry, to tell whether a terminated worker's thread still runs. Deno refuses its own file APIs
 * on /proc/self and /proc/net without `--allow-all`; the library reads them under `--allow-ffi`
 * alone. Loaded only when `--allow-ffi` already grants the library's path: a permission is never
 * prompted for.
 */

/** Where glibc is on Debian/Ubuntu (amd64, arm64) and on Red Hat-like systems. */
export const LIBC_PATHS: readonly string[] = [
  "/lib/x86_64-linux-gnu/libc.so.6",
  "/lib/aarch64-linux-gnu/libc.so.6",
  "/lib64/libc.so.6",
];

/** `shutdown(2)`'s SHUT_RDWR: a listening socket leaves its port's SO_REUSEPORT group. */
const SHUT_RDWR = 2;
/** `getsockopt(2)` level and options (Linux, every architecture Deno runs on). */
const SOL_SOCKET = 1;
const SO_ACCEPTCONN = 30;
/** A socket's cookie: a 64-bit number unique for the life of the system (Linux 4.13+). */
const SO_COOKIE = 57;
/** Where `d_name` starts in glibc's `struct dirent` on 64-bit Linux. */
const DIRENT_NAME = 19;
/** Most bytes of a dirent read: the header and a name of up to 12 digits with its NUL. */
const DIRENT_BYTES = DIRENT_NAME + 13;

/** `access(2)`'s F_OK: the path exists. */
const F_OK = 0;

/** The calls. */
export interface Libc {
  /** The calling thread's kernel thread id; undefined when the C library has no `gettid`. */
  threadId(): number | undefined;
  /**
   * True while thread `tid` of this process exists (its /proc/self/task entry), false once it has
   * ended; undefined when that cannot be told (no /proc).
   */
  threadRunning(tid: number): boolean | undefined;
  /** `shutdown(fd, SHUT_RDWR)`; true when it succeeded. */
  shutdown(fd: number): boolean;
  /** `_exit(code)`: the whole process ends now, whatever its threads are doing. */
  exit(code: number): never;
  /**
   * The listening sockets of the process (on `port` when given): descriptor -> cookie. Undefined
   * when /proc/self/fd cannot be opened.
   */
  listeningSockets(port?: number): Map<number, bigint> | undefined;
  /** The cookie of `fd` when it is a listening socket, else undefined. */
  listeningCookie(fd: number): bigint | undefined;
}

let loaded: Libc | string | undefined;

/** The calls, or why they cannot be had (the message names the flag that would allow them). */
export function libc(): Libc | string {
  return loaded ??= load();
}

function load(): Libc | string {
  if (Deno.build.os !== "linux") return `not available on ${Deno.build.os}`;
  // A bare name lets the dynamic loader search when --allow-ffi is granted without a path.
  for (const path of [...LIBC_PATHS, "libc.so.6"]) {
    try {
      if (Deno.permissions.querySync({ name: "ffi", path }).state !== "granted") continue;
      const lib = Deno.dlopen(path, {
        shutdown: { parameters: ["i32", "i32"], result: "i32" },
        _exit: { parameters: ["i32"], result: "void" },
        getsockopt: { parameters: ["i32", "i32", "i32", "buffer", "buffer"], result: "i32" },
        getsockname: { parameters: ["i32", "buffer", "buffer"], result: "i32" },
        opendir: { parameters: ["buffer"], result: "pointer" },
        readdir: { parameters: ["pointer"], result: "pointer" },
        closedir: { parameters: ["pointer"], result: "i32" },
        // Copies a dirent into a buffer: Deno's pointer views need --allow-ffi for every path.
        memcpy: { parameters: ["buffer", "pointer", "usize"], result: "pointer" },
        // glibc 2.30 and later (optional: an older one still gets the socket calls).
        gettid: { parameters: [], result: "i32", optional: true },
        access: { parameters: ["buffer", "i32"], result: "i32" },
      });
      const f = lib.symbols;
      const value = new Uint8Array(8);
      const length = new Uint32Array(1);
      const view = new DataView(value.buffer);
      const option = (fd: number, name: number): boolean => {
        value.fill(0);
        length[0] = 8;
        return f.getsockopt(fd, SOL_SOCKET, name, value, length) === 0;
      };
      const cookieOf = (fd: number): bigint | undefined => {
        if (!option(fd, SO_ACCEPTCONN) || view.getInt32(0, true) !== 1) return undefined;
        return option(fd, SO_COOKIE) ? view.getBigUint64(0, true) : undefined;
      };
      const address = new Uint8Array(128);
      const addressLength = new Uint32Array(1);
      // sockaddr_in and sockaddr_in6 both hold the port at bytes 2-3, in network order.
      const portOf = (fd: number): number | undefined => {
        addressLength[0] = address.byteLength;
        if (f.getsockname(fd, address, addressLength) !== 0) return undefined;
        return (address[2] << 8) | address[3];
      };
      const fdDir = new TextEncoder().encode("/proc/self/fd\0");
      const dirent = new Uint8Array(DIRENT_BYTES);
      const encoder = new TextEncoder();
      const exists = (path: string) => f.access(encoder.encode(path + "\0"), F_OK) === 0;
      return {
        threadId: () => f.gettid?.() ?? undefined,
        // A thread's id is not reused before the kernel's pid counter wraps around.
        threadRunning: (tid) =>
          exists(`/proc/self/task/${tid}`) ? true : exists("/proc/self/task") ? false : undefined,
        shutdown: (fd) => f.shutdown(fd, SHUT_RDWR) === 0,
        exit: (code) => {
          f._exit(code);
          throw new Error("_exit returned");
        },
        listeningCookie: cookieOf,
        listeningSockets: (port) => {
          const dir = f.opendir(fdDir);
          if (dir === null) return undefined;
          const out = new Map<number, bigint>();
          try {
            for (let entry = f.readdir(dir); entry !== null; entry = f.readdir(dir)) {
              // The header first: its d_reclen says how long the entry is (never read past it).
              f.memcpy(dirent, entry, BigInt(DIRENT_NAME));
              const length = Math.min(dirent[16] | (dirent[17] << 8), DIRENT_BYTES);
              if (length <= DIRENT_NAME) continue;
              dirent.fill(0, DIRENT_NAME);
              f.memcpy(dirent, entry, BigInt(length));
              let fd = 0;
              let at = DIRENT_NAME;
              for (; dirent[at] >= 0x30 && dirent[at] <= 0x39; at++) {
                fd = fd * 10 + dirent[at] - 0x30;
              }
              if (at === DIRENT_NAME || dirent[at] !== 0) continue; // "." and ".."
              const cookie = cookieOf(fd);
              if (cookie === undefined) continue;
              if (port !== undefined && portOf(fd) !== port) continue;
              out.set(fd, cookie);
            }
          } finally {
            f.closedir(dir);
          }
          return out;
        },
      };
    } catch {
      // Not at this path: the next one.
    }
  }
  return `the C library cannot be loaded: run the gateway with --allow-ffi=${LIBC_PATHS[0]} ` +
    "(the path of libc.so.6 on this host)";
}

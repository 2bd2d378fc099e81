/** Resident memory of a process, read from /proc (Linux). */

/** Reads a `kB` field such as `VmRSS` from the text of /proc/<pid>/status, in bytes. */
export function parseStatusField(status: string, field: string): number {
  const match = status.match(new RegExp(`^${field}:\\s*(\\d+)\\s*kB`, "m"));
  if (!match) throw new Error(`no ${field} in /proc status text`);
  return Number(match[1]) * 1024;
}

/** Current resident set size (VmRSS) of process `pid`, in bytes. */
export function rssOf(pid: number): number {
  return parseStatusField(Deno.readTextFileSync(`/proc/${pid}/status`), "VmRSS");
}

/** Peak resident set size (VmHWM) of process `pid` since start or the last {@link resetPeakRss}. */
export function peakRssOf(pid: number): number {
  return parseStatusField(Deno.readTextFileSync(`/proc/${pid}/status`), "VmHWM");
}

/** Resets the peak RSS of `pid` to its current RSS (writes 5 to clear_refs); false if refused. */
export function resetPeakRss(pid: number): boolean {
  try {
    Deno.writeTextFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/**
 * CPU time process `pid` has used so far (user and system, every thread), in milliseconds, from
 * /proc/<pid>/stat (clock ticks of 10 ms). What a process spent while another waited on it tells
 * work from a busy machine: a process waiting for a core uses none.
 */
export function cpuMsOf(pid: number): number {
  const stat = Deno.readTextFileSync(`/proc/${pid}/stat`);
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/** Durations and times for humans. */

/** `90061000` -> `1d 1h 1m`; `59000` -> `59s`; negative -> `expired`. */
export function formatDuration(ms: number): string {
  if (ms <= 0) return "expired";
  let s = Math.floor(ms / 1000);
  const d = Math.floor(s / 86400);
  s -= d * 86400;
  const h = Math.floor(s / 3600);
  s -= h * 3600;
  const m = Math.floor(s / 60);
  s -= m * 60;
  const parts: string[] = [];
  if (d) parts.push(`${d}d`);
  if (h) parts.push(`${h}h`);
  if (m && !d) parts.push(`${m}m`);
  if (!d && !h && (s || !m)) parts.push(`${s}s`);
  return parts.join(" ");
}

/** `1536` -> `1.5 KiB`; under 1 KiB in bytes. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB"];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

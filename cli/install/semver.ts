/** Ordering release versions by Semantic Versioning 2.0.0 precedence (§11). */

interface Parts {
  core: bigint[];
  pre: string[];
}

function parts(version: string): Parts {
  const text = version.replace(/^v/, "").replace(/\+.*$/, ""); // build metadata has no rank
  const dash = text.indexOf("-");
  const core = (dash < 0 ? text : text.slice(0, dash)).split(".");
  if (core.length !== 3 || core.some((n) => !/^\d+$/.test(n))) {
    throw new Error(`not a release version: ${version}`);
  }
  return { core: core.map(BigInt), pre: dash < 0 ? [] : text.slice(dash + 1).split(".") };
}

function compareIdentifier(a: string, b: string): number {
  const an = /^\d+$/.test(a);
  const bn = /^\d+$/.test(b);
  if (an && bn) return BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0;
  if (an !== bn) return an ? -1 : 1; // numeric identifiers rank below alphanumeric ones
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Negative when release `a` precedes `b`, positive when it follows, 0 when they rank alike
 * (`1.0.0-rc.1` < `1.0.0` < `1.0.1`; `+build` metadata is ignored).
 */
export function compareVersions(a: string, b: string): number {
  const x = parts(a);
  const y = parts(b);
  for (let i = 0; i < 3; i++) {
    if (x.core[i] !== y.core[i]) return x.core[i] < y.core[i] ? -1 : 1;
  }
  // A pre-release ranks below the release itself.
  if (x.pre.length === 0 || y.pre.length === 0) return y.pre.length - x.pre.length;
  for (let i = 0; i < Math.min(x.pre.length, y.pre.length); i++) {
    const c = compareIdentifier(x.pre[i], y.pre[i]);
    if (c !== 0) return c;
  }
  return x.pre.length - y.pre.length;
}

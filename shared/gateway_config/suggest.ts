/** "Did you mean" suggestions for misspelled keys, names and enum values. */

/** Optimal-string-alignment distance: Levenshtein plus adjacent transpositions (`tiemout`). */
export function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) => {
    const row = new Array<number>(cols).fill(0);
    row[0] = i;
    return row;
  });
  for (let j = 0; j < cols; j++) d[0][j] = j;
  for (let i = 1; i < rows; i++) {
    for (let j = 1; j < cols; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[rows - 1][cols - 1];
}

/** The closest candidate to `input`, or undefined when none is close enough to be a likely typo. */
export function closest(input: string, candidates: Iterable<string>): string | undefined {
  const needle = input.toLowerCase();
  // Short words tolerate one edit, longer ones a third of their length (at most 3).
  const limit = Math.min(3, Math.max(1, Math.floor(needle.length / 3)));
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const candidate of candidates) {
    const distance = editDistance(needle, candidate.toLowerCase());
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return bestDistance <= limit ? best : undefined;
}

/** `"; did you mean `x`?"` when a candidate is close, else an empty string. */
export function didYouMean(input: string, candidates: Iterable<string>): string {
  const hit = closest(input, candidates);
  return hit === undefined ? "" : `; did you mean \`${hit}\`?`;
}

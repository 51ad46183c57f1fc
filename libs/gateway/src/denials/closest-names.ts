/** The candidates within a small edit distance of `name` (or sharing a prefix), closest first, at most three. */
export function closestNames(name: string, candidates: readonly string[]): string[] {
  const wanted = name.toLowerCase().slice(0, 64);
  const limit = Math.max(2, Math.floor(wanted.length / 3));
  return candidates
    .map((candidate) => ({ candidate, distance: distance(wanted, candidate.toLowerCase()) }))
    .filter(({ candidate, distance: d }) => d <= limit || (wanted.length >= 3 && candidate.toLowerCase().startsWith(wanted)))
    .sort((a, b) => a.distance - b.distance || a.candidate.localeCompare(b.candidate))
    .slice(0, 3)
    .map(({ candidate }) => candidate);
}

/** Levenshtein distance, two rows. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] as number) + 1, (current[j - 1] as number) + 1, substitution);
    }
    previous = current;
  }
  return previous[b.length] as number;
}

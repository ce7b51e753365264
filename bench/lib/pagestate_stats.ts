/** Summaries of timed samples for the page-state bench. */

export interface Summary {
  n: number;
  median: number;
  p90: number;
  max: number;
  /** The first sample alone: a cold call (nothing cached yet) stands out here. */
  first: number;
  samples: number[];
}

export function summarize(samples: number[]): Summary {
  const s = [...samples].sort((a, b) => a - b);
  if (s.length === 0) return { n: 0, median: NaN, p90: NaN, max: NaN, first: NaN, samples };
  const mid = Math.floor(s.length / 2);
  return {
    n: s.length,
    median: s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2,
    // Nearest rank, as the other benches use.
    p90: s[Math.ceil(0.9 * s.length) - 1],
    max: s[s.length - 1],
    first: samples[0],
    samples: samples.map((v) => Math.round(v * 10) / 10),
  };
}

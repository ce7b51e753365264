/** Side-by-side tables for the benchmark reports, and the number formats their cells use. */

/**
 * Lays out rows (the first is the header) in columns two spaces apart: labels left-aligned, values
 * right-aligned, a dashed rule under the header.
 */
export function formatTable(rows: string[][]): string {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((row) => row[c].length)));
  const line = (row: string[]) =>
    row.map((cell, c) => c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c])).join("  ");
  return [line(rows[0]), widths.map((w) => "-".repeat(w)).join("  "), ...rows.slice(1).map(line)].join("\n");
}

/** Rounded, with thousands separators; "—" when there is no value. */
export const int = (n: number | undefined) => n === undefined ? "—" : Math.round(n).toLocaleString("en-US");

/** Exactly `d` decimals, with thousands separators; "—" when there is no value. */
export const dec = (n: number | undefined, d = 1) =>
  n === undefined ? "—" : n.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });

/** Kibibytes (as /proc reports RSS) shown as MiB. */
export const mb = (kb: number) => `${dec(kb / 1024)} MiB`;

/** Bytes shown as KiB. */
export const kb = (bytes: number | undefined) => bytes === undefined ? "—" : `${dec(bytes / 1024)} KiB`;

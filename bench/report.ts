// One row of `npm run bench`: our number next to a baseline measured in the same run.
export interface BenchRow {
  name: string;
  value: number;
  unit: string;
  baseline?: number;
  baselineName?: string;
  target?: string;
  /** Whether the target holds, when there is one. */
  ok?: boolean;
}

export function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function percentile(values: number[], p: number): number {
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] as number;
}

const fmt = (n: number) =>
  Math.abs(n) >= 100 ? n.toFixed(0) : Math.abs(n) >= 10 ? n.toFixed(1) : n.toFixed(2);

export function printRows(section: string, rows: BenchRow[]): void {
  process.stdout.write(`\n## ${section}\n`);
  for (const r of rows) {
    const base =
      r.baseline === undefined
        ? ""
        : `  | ${r.baselineName ?? "baseline"}: ${fmt(r.baseline)} ${r.unit} (ratio ${(r.value / r.baseline).toFixed(2)}x)`;
    const target = r.target
      ? `  | target ${r.target}: ${r.ok === undefined ? "?" : r.ok ? "met" : "MISSED"}`
      : "";
    process.stdout.write(`${r.name.padEnd(52)} ${fmt(r.value).padStart(9)} ${r.unit}${base}${target}\n`);
  }
}

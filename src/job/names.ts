// Job folder names follow upstream: the start time, YYYY-MM-DD__HH-MM-SS (local time).
export function jobNameFor(date: Date): string {
  const p = (n: number) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${p(date.getMonth() + 1)}-${p(date.getDate())}__${p(date.getHours())}-${p(date.getMinutes())}-${p(date.getSeconds())}`;
}

/** The folder of the Nth repeat job: trial-01, trial-02, ... */
export function repeatLabel(index: number, total: number): string {
  return `trial-${String(index).padStart(Math.max(2, String(total).length), "0")}`;
}

/** A job name must be one path segment we can create anywhere. */
export function validJobName(name: string): boolean {
  return /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/.test(name);
}

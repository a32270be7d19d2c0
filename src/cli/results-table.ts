// `bench results`: the run and group summaries as terminal tables, the same numbers as the page.

import { CATEGORY_LABEL, DASH, fixed, maskedText, seconds, usd } from "../view/html/format.js";
import type { JobLine, MemberLine, RunSummary, Totals } from "../view/model/run-summary.js";
import { CATEGORIES } from "../view/model/summary.js";
import { printable } from "./terminal-text.js";

function table(header: string[], rows: string[][], right: Set<number>): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (right.has(i) ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number)))
      .join("  ")
      .trimEnd();
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)];
}

const outcomeText = (t: Totals) =>
  CATEGORIES.filter((c) => t.outcomes[c] > 0)
    .map((c) => `${CATEGORY_LABEL[c]} ${t.outcomes[c]}`)
    .join(", ") || DASH;

export function resultsText(s: RunSummary): string {
  const out = [
    `Run: ${printable(s.jobs_dir)}`,
    `grouped by ${s.group_by.join(",")}, advantage ${s.advantage}`,
    "",
    ...runTable(s.run),
    "",
    `Jobs (${s.jobs.length})`,
    ...jobsTable(s.jobs),
    "",
    `Groups (${s.groups.length}: ${s.run.zero_spread_groups} zero spread, ${s.run.withheld_groups} withheld)`,
    ...groupsTable(s),
  ];
  return `${out.join("\n")}\n`;
}

/** The run's totals: one row. */
function runTable(r: RunSummary["run"]): string[] {
  return table(
    [
      "rollouts",
      "in mean",
      "mean reward",
      "masked",
      ...CATEGORIES.map((c) => CATEGORY_LABEL[c] as string),
      "tokens in",
      "tokens out",
      "cost",
      "wall time",
      "replaced",
    ],
    [
      [
        String(r.rollouts),
        String(r.scored),
        fixed(r.mean_reward),
        maskedText(r),
        ...CATEGORIES.map((c) => String(r.outcomes[c])),
        String(r.tokens.input),
        String(r.tokens.output),
        usd(r.cost_usd),
        seconds(r.wall_time_sec),
        String(r.replaced),
      ],
    ],
    new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13]),
  );
}

/** One row per job (a trial-NN folder of --trials N). */
function jobsTable(jobs: JobLine[]): string[] {
  return table(
    ["job", "trial", "rollouts", "mean reward", "masked", "outcomes", "tokens in/out", "cost", "wall time"],
    jobs.map((j) => [
      printable(j.path),
      j.trial ?? DASH,
      String(j.rollouts),
      fixed(j.mean_reward),
      maskedText(j),
      outcomeText(j),
      `${j.tokens.input}/${j.tokens.output}`,
      usd(j.cost_usd),
      seconds(j.wall_time_sec),
    ]),
    new Set([2, 3, 4]),
  );
}

/**
 * The keys a group's row is labelled with: the task, and the keys whose values differ between the
 * run's groups (the line above the table names every key, so the same value on each row says nothing).
 */
function labelKeys(s: RunSummary): string[] {
  const keys = [...new Set(s.groups.flatMap((g) => Object.keys(g.key)))];
  const varying = keys.filter((k) => new Set(s.groups.map((g) => g.key[k] ?? null)).size > 1);
  const first = keys.includes("task") ? ["task"] : keys.slice(0, 1);
  return [...first, ...varying.filter((k) => !first.includes(k))];
}

/** Each group's row, then one indented row per member with its reward and advantage. */
function groupsTable(s: RunSummary): string[] {
  const rows: string[][] = [];
  const shown = labelKeys(s);
  for (const g of s.groups) {
    const status = g.withheld ? `withheld: ${g.withheld}` : g.zero_spread ? "zero spread" : "";
    const key = shown.map((k) => g.key[k] ?? "null").join(" ");
    rows.push([
      printable(key),
      String(g.rollouts),
      String(g.scored),
      fixed(g.mean),
      fixed(g.std),
      "",
      "",
      status,
    ]);
    for (const m of g.members) rows.push(memberRow(m));
  }
  return table(
    [
      "group / rollout",
      "rollouts",
      "scored",
      "mean",
      "std",
      "reward",
      `advantage (${s.advantage})`,
      "outcome",
    ],
    rows,
    new Set([1, 2, 3, 4, 5, 6]),
  );
}

function memberRow(m: MemberLine): string[] {
  const outcome = [
    m.outcome ?? DASH,
    m.outcome_category,
    m.withheld_reason ? `withholds: ${m.withheld_reason}` : null,
  ];
  return [
    `  ${printable(m.rollout)}`,
    "",
    "",
    "",
    "",
    fixed(m.reward),
    fixed(m.advantage),
    outcome.filter(Boolean).join(" "),
  ];
}

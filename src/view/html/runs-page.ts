// The runs page: the run's totals, every job (trial-NN) folder, and the groups as `bench train` makes them.
import type { GroupLine, JobLine, RunSummary, Totals } from "../model/run-summary.js";
import { CATEGORIES } from "../model/summary.js";
import { type Html, html } from "./escape.js";
import { CATEGORY_LABEL, DASH, fixed, int, maskedText, seconds, usd } from "./format.js";
import type { Links } from "./links.js";

export const PAGE_SIZE = 200;

/** Orders of the groups table: train's (path order), widest spread first, lowest or highest mean first. */
export const GROUP_SORTS = ["path", "spread", "mean", "-mean"] as const;
export type GroupSort = (typeof GROUP_SORTS)[number];
const SORT_LABEL: Record<GroupSort, string> = {
  path: "train's order",
  spread: "widest spread first",
  mean: "lowest mean first",
  "-mean": "highest mean first",
};

export function sortGroups(groups: GroupLine[], sort: GroupSort): GroupLine[] {
  if (sort === "path") return groups;
  const val = (g: GroupLine) => (sort === "spread" ? (g.std ?? -1) : (g.mean ?? Number.NaN));
  const sign = sort === "mean" ? 1 : -1;
  return [...groups].sort((a, b) => {
    const x = val(a);
    const y = val(b);
    if (Number.isNaN(x) !== Number.isNaN(y)) return Number.isNaN(x) ? 1 : -1;
    return x === y || (Number.isNaN(x) && Number.isNaN(y)) ? 0 : sign * (x - y);
  });
}

function sortLinks(links: Links, current: GroupSort): Html {
  const items = GROUP_SORTS.map((o) => {
    const href = links.runsPage({ sort: o });
    if (!href) return "";
    return o === current
      ? html`<b data-sort="${o}">${SORT_LABEL[o]}</b> `
      : html`<a href="${href}" data-testid="sort-${o}">${SORT_LABEL[o]}</a> `;
  });
  return items.some((i) => i !== "") ? html`<p class="muted">order: ${items}</p>` : html``;
}

function outcomes(t: Totals): Html {
  return html`${CATEGORIES.map(
    (c) => html`<span class="badge" data-field="outcome-${c}">${CATEGORY_LABEL[c]}: ${t.outcomes[c]}</span>`,
  )}`;
}

export function runSummaryBlock(s: RunSummary): Html {
  const r = s.run;
  return html`<section id="run-summary" data-live data-testid="run-summary">
<table class="kv">
<tr><td>rollouts</td><td data-field="rollouts" class="num">${r.rollouts}</td></tr>
<tr><td>mean reward</td><td data-field="mean-reward" class="num">${fixed(r.mean_reward)}</td></tr>
<tr><td>masked</td><td data-field="masked" class="num">${maskedText(r)}</td></tr>
<tr><td>scored</td><td data-field="scored" class="num">${r.scored}</td></tr>
<tr><td>outcomes</td><td data-field="outcomes">${outcomes(r)}</td></tr>
<tr><td>groups</td><td data-field="groups" class="num">${r.groups} (${r.zero_spread_groups} zero spread, ${r.withheld_groups} withheld)</td></tr>
<tr><td>replaced attempts</td><td data-field="replaced" class="num">${r.replaced}</td></tr>
<tr><td>tokens (in / out)</td><td data-field="tokens" class="num">${r.tokens.input} / ${r.tokens.output}</td></tr>
<tr><td>cost</td><td data-field="cost" class="num">${usd(r.cost_usd)}</td></tr>
<tr><td>wall time</td><td data-field="wall-time" class="num">${seconds(r.wall_time_sec)}</td></tr>
</table></section>`;
}

function pager(
  kind: "groups" | "jobs",
  pageNo: number,
  total: number,
  links: Links,
  other: number,
  size: number,
): Html {
  const pages = Math.ceil(total / size);
  if (pages <= 1) return html``;
  const to = (n: number) =>
    links.runsPage(kind === "groups" ? { groups: n, jobs: other } : { jobs: n, groups: other });
  const prev = pageNo > 1 ? to(pageNo - 1) : null;
  const next = pageNo < pages ? to(pageNo + 1) : null;
  return html`<nav class="pages" data-testid="${kind}-pages">page ${pageNo} of ${pages}
${prev ? html`<a href="${prev}" rel="prev">previous</a>` : ""}${next ? html`<a href="${next}" rel="next">next</a>` : ""}</nav>`;
}

export function groupRow(g: GroupLine, links: Links): Html {
  const keyText = Object.entries(g.key)
    .map(([k, v]) => `${k}=${v ?? "null"}`)
    .join(" ");
  const cls = g.withheld ? "withheld" : g.zero_spread ? "zero" : "";
  return html`<tr data-group-id="${g.url_id}" class="${cls}">
<td><a href="${links.group(g.url_id)}">${keyText}</a></td>
<td class="num">${g.rollouts}</td><td class="num">${g.scored}</td>
<td class="num">${fixed(g.mean)}</td><td class="num">${fixed(g.std)}</td>
<td>${g.zero_spread ? html`<span class="badge zero">zero spread</span>` : ""}${
    g.withheld ? html`<span class="badge withheld">withheld: ${g.withheld}</span>` : ""
  }</td></tr>`;
}

export function groupsTable(groups: GroupLine[], links: Links, id = "groups-table"): Html {
  return html`<table data-testid="groups" id="${id}" data-live>
<thead><tr><th>group</th><th>rollouts</th><th>scored</th><th>mean</th><th>std</th><th></th></tr></thead>
<tbody>${groups.map((g) => groupRow(g, links))}</tbody></table>`;
}

function jobRow(j: JobLine): Html {
  return html`<tr data-job="${j.path}"><td>${j.id}</td><td>${j.trial ?? DASH}</td>
<td class="num">${j.rollouts}</td><td class="num">${fixed(j.mean_reward)}</td><td class="num" data-field="masked">${maskedText(j)}</td><td>${outcomes(j)}</td>
<td class="num">${j.tokens.input} / ${j.tokens.output}</td><td class="num">${usd(j.cost_usd)}</td>
<td class="num">${seconds(j.wall_time_sec)}</td><td class="num">${int(j.replaced)}</td></tr>`;
}

export function jobsTable(jobs: JobLine[], id = "jobs-table"): Html {
  return html`<table data-testid="jobs" id="${id}" data-live>
<thead><tr><th>job</th><th>trial</th><th>rollouts</th><th>mean reward</th><th>masked</th><th>outcomes</th><th>tokens in / out</th><th>cost</th><th>wall time</th><th>replaced</th></tr></thead>
<tbody>${jobs.map(jobRow)}</tbody></table>`;
}

export function groupKeyBlock(s: RunSummary): Html {
  return html`<p>grouped by <code data-testid="group-key">${s.group_by.join(",")}</code>, advantage <code>${s.advantage}</code></p>`;
}

export function runsPage(
  s: RunSummary,
  links: Links,
  paging: { groups: number; jobs: number; size?: number; sort?: GroupSort } = { groups: 1, jobs: 1 },
  arms: Html | null = null,
): Html {
  const sort = paging.sort ?? "path";
  const ordered = sortGroups(s.groups, sort);
  const size = paging.size ?? PAGE_SIZE;
  const gPage = Math.max(1, paging.groups);
  const jPage = Math.max(1, paging.jobs);
  const groups = ordered.slice((gPage - 1) * size, gPage * size);
  const jobs = s.jobs.slice((jPage - 1) * size, jPage * size);
  return html`<h1 id="runs">Run: <span class="muted">${s.jobs_dir}</span></h1>
${runSummaryBlock(s)}
${groupKeyBlock(s)}
${arms}
<h2>Groups (${s.groups.length})</h2>
${sortLinks(links, sort)}
${pager("groups", gPage, s.groups.length, links, jPage, size)}
${groupsTable(groups, links)}
<h2>Jobs (${s.jobs.length})</h2>
${pager("jobs", jPage, s.jobs.length, links, gPage, size)}
${jobsTable(jobs)}`;
}

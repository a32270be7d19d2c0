// Two arms of an A/B run side by side: their totals, then each task's mean reward in each arm.

import type { Rollout } from "../../jobs-dir/index.js";
import type { ArmBy } from "../model/arms.js";
import { totalsOf } from "../model/run-summary.js";
import { type Html, html } from "./escape.js";
import { DASH, fixed, usd } from "./format.js";
import type { Links } from "./links.js";

const meanOf = (rs: Rollout[]) => {
  const s = rs.map((r) => r.reward).filter((x): x is number => x !== null);
  return s.length ? s.reduce((a, b) => a + b, 0) / s.length : null;
};

export function abPage(
  by: ArmBy,
  arms: Map<string | null, Rollout[]>,
  a: string | null,
  b: string | null,
  links: Links,
  otherBy: Array<{ by: ArmBy; values: Array<string | null> }>,
): Html {
  const names = [...arms.keys()];
  const choose = otherBy.map(
    (o) =>
      html`<p>${o.by}: ${
        o.values.length < 2
          ? html`<span class="muted">one arm only (${o.values.map((v) => v ?? "not recorded").join(", ")})</span>`
          : o.values.flatMap((x, i) =>
              o.values.slice(i + 1).map((y) => {
                const href = links.ab(o.by, x ?? "", y ?? "");
                return href
                  ? html`<a href="${href}" data-testid="arm-pair">${x ?? "none"} vs ${y ?? "none"}</a> `
                  : "";
              }),
            )
      }</p>`,
  );
  if (a === null || b === null || !arms.has(a === "" ? null : a) || !arms.has(b === "" ? null : b))
    return html`<h1>A/B arms</h1><p>Pick two arms.</p>${choose}<p class="muted">arms by ${by}: ${names.map((n) => n ?? "none").join(", ") || DASH}</p>`;
  const A = arms.get(a === "" ? null : a) ?? [];
  const B = arms.get(b === "" ? null : b) ?? [];
  const ta = totalsOf(A);
  const tb = totalsOf(B);
  const tasks = [...new Set([...A, ...B].map((r) => r.task))].sort();
  return html`<h1>A/B by ${by}: <code>${a || "none"}</code> vs <code>${b || "none"}</code></h1>
<table data-testid="ab" id="ab-table" data-live>
<thead><tr><th></th><th>${a || "none"}</th><th>${b || "none"}</th></tr></thead>
<tbody>
<tr><td>rollouts</td><td class="num" data-arm="a" data-field="rollouts">${ta.rollouts}</td><td class="num" data-arm="b" data-field="rollouts">${tb.rollouts}</td></tr>
<tr><td>mean reward</td><td class="num" data-arm="a" data-field="mean-reward">${fixed(ta.mean_reward)}</td><td class="num" data-arm="b" data-field="mean-reward">${fixed(tb.mean_reward)}</td></tr>
<tr><td>scored</td><td class="num">${ta.scored}</td><td class="num">${tb.scored}</td></tr>
<tr><td>tokens in / out</td><td class="num">${ta.tokens.input} / ${ta.tokens.output}</td><td class="num">${tb.tokens.input} / ${tb.tokens.output}</td></tr>
<tr><td>cost</td><td class="num">${usd(ta.cost_usd)}</td><td class="num">${usd(tb.cost_usd)}</td></tr>
</tbody></table>
<h2>By task</h2>
<table data-testid="ab-tasks"><thead><tr><th>task</th><th>${a || "none"}</th><th>${b || "none"}</th><th>difference</th></tr></thead><tbody>
${tasks.map((t) => {
  const ma = meanOf(A.filter((r) => r.task === t));
  const mb = meanOf(B.filter((r) => r.task === t));
  return html`<tr data-task="${t}"><td>${t}</td><td class="num">${fixed(ma)}</td><td class="num">${fixed(mb)}</td><td class="num">${ma !== null && mb !== null ? fixed(mb - ma) : DASH}</td></tr>`;
})}</tbody></table>
${choose}`;
}

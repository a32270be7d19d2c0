// One group: each member's reward, advantage (grpo or loo), outcome, policy version and duration;
// zero spread and withholding marked, with the reason.
import type { Normalisation } from "../../jobs-dir/groups/advantage.js";
import type { GroupLine, MemberLine } from "../model/run-summary.js";
import { type Html, html } from "./escape.js";
import { CATEGORY_LABEL, DASH, fixed, seconds } from "./format.js";
import type { Links } from "./links.js";

const WITHHELD_TEXT: Record<string, string> = {
  missing_result: "a member has no result.json (still running, or the run died)",
  truncated_result: "a member's result.json is cut short or not a result",
  unscored_member: "a member is unscored (rewards null): the group's baseline would be wrong",
  no_model_calls: "a member made no model calls (no llm_trajectory.jsonl lines)",
  all_calls_failed: "every model call of a member failed",
};

function memberRow(m: MemberLine, links: Links, best: MemberLine | null): Html {
  const cmp = best && best.rollout !== m.rollout ? links.compare(m.rollout, best.rollout) : null;
  return html`<tr data-rollout="${m.rollout}" class="${m.withheld_reason ? "withheld" : ""}">
<td><a href="${links.rollout(m.rollout)}">${m.rollout}</a></td>
<td data-field="reward" class="num">${fixed(m.reward)}</td>
<td data-field="advantage" class="num">${fixed(m.advantage)}</td>
<td data-field="outcome">${m.outcome ?? DASH}${m.outcome_category ? html` <span class="badge">${m.outcome_category}</span>` : ""}</td>
<td data-field="category">${CATEGORY_LABEL[m.category]}</td>
<td data-field="policy-version">${m.policy_version ?? DASH}</td>
<td data-field="duration" class="num">${seconds(m.duration_sec)}</td>
<td data-field="withheld">${m.withheld_reason ?? ""}</td>
<td>${cmp ? html`<a href="${cmp}" data-testid="compare-link">compare with best</a>` : ""}</td></tr>`;
}

export function groupSection(g: GroupLine, links: Links, norm: Normalisation, anchor?: string): Html {
  const scored = g.members.filter((m) => m.reward !== null);
  const best = scored.reduce<MemberLine | null>(
    (b, m) => (b === null || (m.reward ?? 0) > (b.reward ?? 0) ? m : b),
    null,
  );
  const worst = scored.reduce<MemberLine | null>(
    (w, m) => (w === null || (m.reward ?? 0) < (w.reward ?? 0) ? m : w),
    null,
  );
  const bw =
    best && worst && best.rollout !== worst.rollout ? links.compare(best.rollout, worst.rollout) : null;
  const grpo = links.group(g.url_id, "grpo");
  const loo = links.group(g.url_id, "loo");
  return html`<section id="${anchor ?? "group"}" data-live data-group="${g.url_id}">
<h1>Group <code>${g.id}</code></h1>
<p>${Object.entries(g.key).map(([k, v]) => html`<span class="badge">${k}: ${v ?? "null"}</span>`)}</p>
<p>${g.rollouts} rollouts, ${g.scored} scored · mean ${fixed(g.mean)} · std ${fixed(g.std)} · advantage
<a href="${grpo}" data-testid="advantage-grpo"${norm === "grpo" ? html` aria-current="true"` : ""}>grpo</a> |
<a href="${loo}" data-testid="advantage-loo"${norm === "loo" ? html` aria-current="true"` : ""}>loo</a>
(showing <b data-testid="advantage-shown">${norm}</b>)</p>
${g.zero_spread ? html`<p class="zero" data-testid="zero-spread">Zero spread: every scored reward is ${fixed(scored[0]?.reward ?? null)}, so every advantage is 0 and the group teaches nothing.</p>` : ""}
${g.withheld ? html`<p class="withheld">Withheld from training: <b data-testid="withheld-reason">${g.withheld}</b> — ${WITHHELD_TEXT[g.withheld] ?? ""}</p>` : ""}
${bw ? html`<p><a href="${bw}" data-testid="compare-best-worst">compare best and worst</a></p>` : ""}
<table data-testid="members">
<thead><tr><th>rollout</th><th>reward</th><th>advantage (${norm})</th><th>outcome</th><th>category</th><th>policy version</th><th>duration</th><th>withholds</th><th></th></tr></thead>
<tbody>${g.members.map((m) => memberRow(m, links, best))}</tbody></table>
</section>`;
}

export function missingGroup(id: string): Html {
  return html`<h1>No such group</h1><p>No group <code>${id}</code> under this folder with these keys.</p>`;
}

export { DASH };

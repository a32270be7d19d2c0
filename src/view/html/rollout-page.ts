// One rollout: instruction, trajectory in order, model calls with their tokens, verifier output,
// rewards, timing, config.json and the raw files. All of it is the policy's text: escaped by `html`.
import { policyVersionKey } from "../../jobs-dir/groups/groups.js";
import type { ModelCall, RolloutDetail, Step, Token } from "../model/rollout-detail.js";
import { categoryOf, durationSecOf } from "../model/summary.js";
import { type Html, html } from "./escape.js";
import { CATEGORY_LABEL, DASH, fixed, int, seconds } from "./format.js";
import type { Links } from "./links.js";

const BUCKETS = [0.9, 0.75, 0.6, 0.45, 0.3, 0.15, 0.05];

/** A token coloured by its probability; a masked or uncaptured position has no logprob at all. */
function tokenSpan(t: Token): Html {
  if (t.logprob === null) return html`<span class="tok masked" title="no logprob">${t.text}</span>`;
  const p = Math.exp(t.logprob);
  const b = BUCKETS.findIndex((x) => p >= x);
  const cls = `lp${b === -1 ? 7 : b}`;
  return html`<span class="tok ${cls}" data-logprob="${String(t.logprob)}" title="logprob ${t.logprob.toFixed(4)} · p ${p.toFixed(3)}${t.id !== null ? ` · id ${t.id}` : ""}">${t.text}</span>`;
}

function stepBlock(s: Step): Html {
  if (s.kind === "thought")
    return html`<div class="step assistant"><details><summary class="role">reasoning</summary><pre>${s.text}</pre></details></div>`;
  if (s.kind === "message")
    return html`<div class="step ${s.role}" data-testid="message" data-role="${s.role}"><div class="role">${s.role}</div>
${s.reasoning ? html`<details><summary>reasoning</summary><pre>${s.reasoning}</pre></details>` : ""}
<pre>${s.text}</pre></div>`;
  return html`<div class="step tool" data-testid="tool-call"><div class="role">tool call <code data-field="tool-name">${s.name}</code>${
    s.status ? html` <span class="badge">${s.status}</span>` : ""
  }</div>
<div>arguments</div><pre data-field="arguments">${s.args}</pre>
<div>output</div><pre data-field="output">${s.output ?? DASH}</pre></div>`;
}

function callBlock(c: ModelCall): Html {
  return html`<div class="step" data-testid="model-call" data-index="${c.index}">
<div class="role">call ${c.index + 1} · ${c.purpose} · status ${c.status ?? DASH} · latency <span data-field="latency">${c.latencyMs === null ? DASH : `${Math.round(c.latencyMs)} ms`}</span>
· tokens in <span data-field="input-tokens">${int(c.inputTokens)}</span> / out <span data-field="output-tokens">${int(c.outputTokens)}</span>${
    c.policyVersion ? html` · policy ${c.policyVersion}` : ""
  }</div>
${c.error ? html`<pre>${c.error}</pre>` : ""}
${
  c.tokens
    ? html`<div data-testid="tokens">${c.tokens.map(tokenSpan)}</div>`
    : html`<div class="muted">no token capture for this call</div>`
}</div>`;
}

function kvTable(obj: Record<string, unknown> | null, testid: string): Html {
  if (!obj) return html`<p class="muted" data-testid="${testid}">none recorded</p>`;
  return html`<table class="kv" data-testid="${testid}">${Object.entries(obj).map(
    ([k, v]) =>
      html`<tr data-key="${k}"><td>${k}</td><td class="num">${typeof v === "number" ? String(v) : JSON.stringify(v)}</td></tr>`,
  )}</table>`;
}

export function rolloutSection(d: RolloutDetail, links: Links, anchor?: string): Html {
  const s = d.rollout;
  const raw = (p: string, label = p) => {
    const href = links.raw(`${s.relPath}/${p}`);
    return href ? html`<a href="${href}" data-testid="raw-link">${label}</a>` : html`<code>${label}</code>`;
  };
  return html`<section id="${anchor ?? "rollout"}" data-live data-rollout-page="${s.relPath}">
<h1>Rollout <code>${s.relPath}</code></h1>
<table class="kv" data-testid="rollout-summary">
<tr><td>task</td><td>${s.task}</td></tr><tr><td>job</td><td>${s.job.id}${s.job.repeat ? ` (${s.job.repeat})` : ""}</td></tr>
<tr><td>agent / model</td><td>${s.agent ?? DASH} / ${s.model ?? DASH}</td></tr>
<tr><td>reward</td><td data-field="reward">${fixed(s.reward)}</td></tr>
<tr><td>outcome</td><td data-field="outcome">${s.outcome.scoreOutcome ?? DASH}${s.outcome.category ? ` (${s.outcome.category})` : ""} · ${CATEGORY_LABEL[categoryOf(s)]}</td></tr>
<tr><td>attribution</td><td data-field="attribution">${s.outcome.attribution ?? DASH}${s.outcome.attributionReason ? ` (${s.outcome.attributionReason})` : ""}</td></tr>
<tr><td>policy version</td><td>${policyVersionKey(s) ?? DASH}</td></tr>
<tr><td>model calls</td><td>${s.calls?.total ?? 0} (${s.calls?.ok ?? 0} answered)</td></tr>
<tr><td>duration</td><td>${seconds(durationSecOf(s))}</td></tr>
${s.resultProblem ? html`<tr><td>result.json</td><td>${s.resultState}: ${s.resultProblem}</td></tr>` : ""}
${s.replaced ? html`<tr><td>replaced</td><td>by ${s.replaced.replacedBy ?? DASH} (${s.replaced.reason})</td></tr>` : ""}
</table>
<h2>Instruction</h2><pre data-testid="instruction">${d.instruction ?? DASH}</pre>
<h2>Trajectory <span class="muted">(${d.trajectorySource === "agent_events" ? "the agent's events" : d.trajectorySource === "model_calls" ? "the last model call's conversation" : "none recorded"})</span></h2>
<div data-testid="trajectory">${d.trajectory.map(stepBlock)}</div>
<h2>Model calls (${d.calls.length})</h2>
${d.callsProblem ? html`<p class="withheld">${d.callsProblem}</p>` : ""}
<div data-testid="model-calls">${d.calls.map(callBlock)}</div>
<h2>Verifier output</h2><pre data-testid="verifier-output">${d.verifierOutput ?? "(no verifier/test-stdout.txt)"}</pre>
<h2>Rewards</h2>${kvTable(d.rewards, "rewards")}
<h2>Timing (seconds)</h2>${kvTable(d.timing, "timing")}
<h2>config.json</h2><pre data-testid="config">${d.config ? JSON.stringify(d.config, null, 2) : DASH}</pre>
<details><summary>result.json</summary><pre data-testid="result">${d.result ? JSON.stringify(d.result, null, 2) : DASH}</pre></details>
<h2>Raw files</h2><ul data-testid="raw-files">${d.files.map((f) => html`<li>${raw(f.path)} <span class="muted">${f.size} bytes</span></li>`)}</ul>
</section>`;
}

/** Two rollouts side by side (`/compare`): the same sections, in two columns. */
export function comparePage(a: RolloutDetail, b: RolloutDetail, links: Links): Html {
  return html`<h1>Compare</h1>
<p><a href="${links.rollout(a.rollout.relPath)}">${a.rollout.relPath}</a> (reward ${fixed(a.rollout.reward)}) vs
<a href="${links.rollout(b.rollout.relPath)}">${b.rollout.relPath}</a> (reward ${fixed(b.rollout.reward)})</p>
<div class="cols" data-testid="compare"><div data-side="a">${rolloutSection(a, links, "rollout-a")}</div>
<div data-side="b">${rolloutSection(b, links, "rollout-b")}</div></div>`;
}

// The console lines of `bench train`, word for word as the seed prints them.

import type { StreamRecord } from "../schemas/rollout-stream.js";
import type { ConvertResult } from "./convert/types.js";

export function convertLines(res: ConvertResult, out: string): string[] {
  const lines = [`Converted ${res.rows} row(s) from ${res.rollouts} rollout(s) -> ${out}`];
  const g = res.groups;
  if (!g) return lines;
  let line = `Groups (${g.normalisation}, by ${g.by.join(",")}): ${g.groups}; ${g.unscored} unscored rollout(s) left out of every baseline`;
  if (g.singleScored > 0) line += `; ${g.singleScored} group(s) with one scored rollout (no advantage)`;
  const withheld = Object.entries(g.withheld).filter(([, n]) => (n ?? 0) > 0);
  if (withheld.length > 0) {
    const total = withheld.reduce((a, [, n]) => a + (n ?? 0), 0);
    line += `; ${total} group(s) withheld (${withheld.map(([r, n]) => `${r}: ${n}`).join(", ")})`;
  }
  if (g.mixed) line += `; ${g.mixed}`;
  lines.push(`${line}.`);
  return lines;
}

/** The seed's human form of a stream record: `trial-01/.../task__c6049d70   reward 0.0  advantage -0.577`. */
export function textLine(r: StreamRecord): string {
  const reward =
    r.reward === null ? "null" : Number.isInteger(r.reward) ? r.reward.toFixed(1) : String(r.reward);
  const advantage = r.advantage === null ? "  none" : r.advantage.toFixed(3).padStart(6);
  const notes = [
    r.retried ? "retried" : null,
    r.withheld ? `withheld: ${r.withheld}` : null,
    r.group_complete === false ? "incomplete group" : null,
  ].filter((n) => n !== null);
  return `${r.rollout_path}   reward ${reward}  advantage ${advantage}${notes.length > 0 ? `  (${notes.join("; ")})` : ""}`;
}

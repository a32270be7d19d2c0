// How the server answers with a page. A request carries its view in the query (advantage, group_by,
// sort), so a pasted link shows the same view; every page has the same headers: a CSP whose nonce
// lets only our own inline script run, no sniffing, no referrer, no caching of a run that changes.
import { randomBytes } from "node:crypto";
import type { Context } from "hono";
import type { Normalisation } from "../jobs-dir/groups/advantage.js";
import { html } from "./html/escape.js";
import { page } from "./html/layout.js";
import { type Links, serverLinks } from "./html/links.js";
import { GROUP_SORTS, type GroupSort } from "./html/runs-page.js";

/** The server's own view settings, for a request that does not name its own. */
export interface ViewDefaults {
  groupBy?: string;
  advantage?: Normalisation;
}

const ADVANTAGES: readonly Normalisation[] = ["grpo", "loo"];

export type Responder = ReturnType<typeof responder>;

export function responder(defaults: ViewDefaults) {
  const advantageOf = (c: Context): Normalisation => {
    const a = c.req.query("advantage");
    return ADVANTAGES.includes(a as Normalisation) ? (a as Normalisation) : (defaults.advantage ?? "grpo");
  };
  const groupByOf = (c: Context) => c.req.query("group_by") || defaults.groupBy;
  const sortOf = (c: Context): GroupSort => {
    const v = c.req.query("sort");
    return GROUP_SORTS.includes(v as GroupSort) ? (v as GroupSort) : "path";
  };
  const linksOf = (c: Context): Links =>
    serverLinks({ advantage: advantageOf(c), groupBy: c.req.query("group_by"), sort: sortOf(c) });

  const send = (c: Context, title: string, body: ReturnType<typeof html>, status = 200, live = true) => {
    const nonce = randomBytes(16).toString("base64");
    c.header(
      "Content-Security-Policy",
      `default-src 'self'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src 'self' data:; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'`,
    );
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("Cache-Control", "no-store");
    return c.html(page({ title, nonce, live, home: linksOf(c).home }, body), status as 200);
  };

  const userError = (c: Context, err: unknown) =>
    send(c, "bad request", html`<h1>Bad request</h1><p>${(err as Error).message}</p>`, 400, false);

  return { advantageOf, groupByOf, sortOf, linksOf, send, userError };
}

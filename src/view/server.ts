// `bench view`: one hono server over a jobs folder. Pages are rendered here from the index (runs,
// groups) and from the folder on demand (a rollout); every view has its own URL and links to the
// others. Responses carry a CSP whose nonce lets only our own inline script run (respond.ts).
import { promises as fs } from "node:fs";
import type { AddressInfo } from "node:net";
import { createAdaptorServer } from "@hono/node-server";
import { type Context, Hono } from "hono";
import { streamSSE } from "hono/streaming";
import { UserInputError } from "../errors.js";
import type { Normalisation } from "../jobs-dir/groups/advantage.js";
import { opt } from "../options.js";
import { type ChangeListeners, streamEvents } from "./events.js";
import { abPage } from "./html/ab-page.js";
import { html } from "./html/escape.js";
import { groupSection, missingGroup } from "./html/group-page.js";
import { comparePage, rolloutSection } from "./html/rollout-page.js";
import { runsPage } from "./html/runs-page.js";
import { ARM_BYS, type ArmBy, armsOf } from "./model/arms.js";
import { groupByFor, groupsOf } from "./model/groups.js";
import { readRolloutDetail } from "./model/rollout-detail.js";
import { RunIndex } from "./model/run-index.js";
import { groupLine, summaryFromIndex } from "./model/run-summary.js";
import { resolveRaw } from "./raw.js";
import { type Responder, responder, type ViewDefaults } from "./respond.js";
import { watchIndex } from "./watch.js";

export interface ViewServerOptions {
  jobsDir: string;
  host?: string;
  port?: number;
  groupBy?: string;
  advantage?: Normalisation;
  /** Poll instead of fs.watch (tests of the fallback). */
  poll?: boolean;
}

export interface ViewServer {
  url: string;
  close(): Promise<void>;
  index: RunIndex;
}

export function isLoopback(host: string): boolean {
  return host === "localhost" || host === "::1" || /^127\./.test(host);
}

const WAIT_FOR_INDEX = 2000;

export function buildApp(index: RunIndex, opts: ViewDefaults) {
  const app = new Hono();
  const listeners: ChangeListeners = new Set();
  const r = responder(opts);
  routeRunPages(app, index, r);
  routeRolloutPages(app, index, r);
  app.get("/raw/*", (c) => rawFile(c, index));
  app.get("/events", (c) => streamSSE(c, (stream) => streamEvents(stream, index, listeners)));
  app.notFound((c) => r.send(c, "not found", html`<h1>Not found</h1>`, 404, false));

  const notify = (paths: string[]) => {
    if (paths.length === 0) return;
    for (const l of listeners) l(paths);
  };
  return { app, notify, listeners };
}

/** The runs page and a group's page: read from the index, grouped as the request asks. */
function routeRunPages(app: Hono, index: RunIndex, r: Responder): void {
  app.get("/", (c) => {
    try {
      const s = summaryFromIndex(index, { groupBy: r.groupByOf(c), advantage: r.advantageOf(c) });
      const paging = {
        groups: Number(c.req.query("groups_page") ?? 1) || 1,
        jobs: Number(c.req.query("jobs_page") ?? 1) || 1,
        sort: r.sortOf(c),
      };
      const links = r.linksOf(c);
      const ab = links.ab();
      return r.send(
        c,
        "runs",
        html`${runsPage(s, links, paging, ab ? html`<p><a href="${ab}" data-testid="ab-link">A/B arms (skill mode, policy version)</a></p>` : null)}`,
      );
    } catch (err) {
      return r.userError(c, err);
    }
  });

  app.get("/groups/:id", (c) => {
    try {
      const norm = r.advantageOf(c);
      const by = groupByFor(r.groupByOf(c));
      const id = c.req.param("id");
      const g = groupsOf(index, by, norm).find((x) => x.urlId === id);
      if (!g) return r.send(c, "no such group", missingGroup(id), 404);
      return r.send(
        c,
        `group ${g.id}`,
        html`${progressBlock(index)}${groupSection(groupLine(g), r.linksOf(c), norm)}`,
      );
    } catch (err) {
      return r.userError(c, err);
    }
  });
}

/** A rollout's page, two side by side, and the A/B arms: read from the folder on demand. */
function routeRolloutPages(app: Hono, index: RunIndex, r: Responder): void {
  app.get("/rollouts/*", async (c) => {
    const p = decodePath(new URL(c.req.url).pathname.slice("/rollouts/".length));
    const found = p === null ? undefined : index.rollouts.get(p);
    if (!found)
      return r.send(c, "no such rollout", html`<h1>No such rollout</h1><p>${p ?? ""}</p>`, 404, false);
    return r.send(
      c,
      `rollout ${found.relPath}`,
      rolloutSection(await readRolloutDetail(found), r.linksOf(c)),
    );
  });

  app.get("/compare", async (c) => {
    const a = index.rollouts.get(c.req.query("a") ?? "");
    const b = index.rollouts.get(c.req.query("b") ?? "");
    if (!a || !b)
      return r.send(
        c,
        "compare",
        html`<h1>Compare</h1><p>Give two rollouts of this folder: /compare?a=PATH&amp;b=PATH.</p>`,
        404,
        false,
      );
    const [da, db] = await Promise.all([readRolloutDetail(a), readRolloutDetail(b)]);
    return r.send(c, "compare", comparePage(da, db, r.linksOf(c)));
  });

  app.get("/ab", async (c) => {
    const q = c.req.query("by");
    const by: ArmBy = ARM_BYS.includes(q as ArmBy) ? (q as ArmBy) : "skill_mode";
    const all = await Promise.all(ARM_BYS.map(async (b) => ({ by: b, arms: await armsOf(index, b) })));
    const arms = all.find((x) => x.by === by)?.arms ?? new Map();
    const others = all.map((x) => ({ by: x.by, values: [...x.arms.keys()] }));
    const a = c.req.query("a") ?? null;
    const b = c.req.query("b") ?? null;
    return r.send(c, "A/B", abPage(by, arms, a, b, r.linksOf(c), others));
  });
}

/** A file of the folder as plain text, never run or rendered; only what resolveRaw keeps inside. */
async function rawFile(c: Context, index: RunIndex) {
  const rest = new URL(c.req.url).pathname.slice("/raw/".length);
  const file = await resolveRaw(index.root, rest.split("/"));
  if (!file) return c.text("not found", 404);
  const body = await fs.readFile(file);
  return c.body(body, 200, {
    "Content-Type": "text/plain; charset=utf-8",
    "X-Content-Type-Options": "nosniff",
    "Content-Security-Policy": "default-src 'none'; sandbox",
    "Cache-Control": "no-store",
  });
}

/** While a large folder is still being read, the pages say how far (and fill in live). */
function progressBlock(index: RunIndex) {
  const p = index.progress;
  return html`<p id="index-progress" data-live data-testid="index-progress"${p.read < p.total ? "" : html` hidden`}>reading the folder: ${p.read} of ${p.total} rollouts read; the numbers below are of those.</p>`;
}

function decodePath(encoded: string): string | null {
  try {
    return encoded
      .split("/")
      .map((s) => decodeURIComponent(s))
      .join("/");
  } catch {
    return null;
  }
}

export async function startViewServer(opts: ViewServerOptions): Promise<ViewServer> {
  // The first page need not wait for every rollout: the folders are found, the rollouts read after.
  const index = await RunIndex.open(opts.jobsDir, { background: true });
  // A folder of a few thousand rollouts is read before the first answer (a page is then never
  // partial for a small run); a larger one answers at once and its pages fill in as it is read.
  if (index.progress.total <= WAIT_FOR_INDEX) await index.ready;
  // A bad --group-by is the user's to fix before the server starts.
  groupByFor(opts.groupBy);
  const { app, notify, listeners } = buildApp(index, opts);
  const offProgress = index.onChange(notify);
  const watcher = watchIndex(index, () => undefined, { forcePoll: opts.poll });
  const server = createAdaptorServer({ fetch: app.fetch });
  const host = opts.host ?? "127.0.0.1";
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => {
      watcher.close();
      offProgress();
      const port = opts.port ?? 0;
      if (err.code === "EADDRINUSE")
        reject(
          new UserInputError(
            `${opt("port", port)}: already in use on ${host}; give another port, or 0 for any free one.`,
          ),
        );
      else if (err.code === "EADDRNOTAVAIL" || err.code === "ENOTFOUND")
        reject(
          new UserInputError(
            `${opt("host", host)}: not an address of this machine; use 127.0.0.1, or 0.0.0.0 for every address.`,
          ),
        );
      else reject(err);
    });
    server.listen(opts.port ?? 0, host, () => resolve());
  });
  const addr = server.address() as AddressInfo;
  const shown = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  return {
    url: `http://${shown === "0.0.0.0" || shown === "[::]" ? "127.0.0.1" : shown}:${addr.port}/`,
    index,
    close: () =>
      new Promise<void>((resolve) => {
        watcher.close();
        offProgress();
        listeners.clear();
        const s = server as unknown as { closeAllConnections?: () => void; close: (cb: () => void) => void };
        s.close(() => resolve());
        s.closeAllConnections?.();
      }),
  };
}

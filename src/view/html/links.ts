// Where each view lives: its URL on the server, its anchor in the exported page.
import type { Normalisation } from "../../jobs-dir/groups/advantage.js";

export interface Links {
  home: string;
  group(urlId: string, advantage?: Normalisation): string;
  rollout(path: string): string;
  compare(a: string, b: string): string | null;
  raw(path: string): string | null;
  ab(by?: string, a?: string, b?: string): string | null;
  /** The runs page with its tables turned to a page. */
  runsPage(page: { groups?: number; jobs?: number; sort?: string }): string | null;
}

const encPath = (p: string) => p.split("/").map(encodeURIComponent).join("/");

export function serverLinks(q: { advantage: Normalisation; groupBy?: string; sort?: string }): Links {
  // The runs page's --group-by and advantage travel with the links, so a pasted link shows the same view.
  const keep = (params: URLSearchParams) => {
    if (q.groupBy) params.set("group_by", q.groupBy);
    return params;
  };
  const qs = (params: URLSearchParams) => {
    const s = keep(params).toString();
    return s ? `?${s}` : "";
  };
  return {
    home: `/${qs(new URLSearchParams())}`,
    group: (id, adv) =>
      `/groups/${encodeURIComponent(id)}${qs(new URLSearchParams({ advantage: adv ?? q.advantage }))}`,
    rollout: (p) => `/rollouts/${encPath(p)}`,
    compare: (a, b) => `/compare?${new URLSearchParams({ a, b }).toString()}`,
    raw: (p) => `/raw/${encPath(p)}`,
    ab: (by, a, b) => {
      const params = new URLSearchParams();
      if (by) params.set("by", by);
      if (a) params.set("a", a);
      if (b) params.set("b", b);
      return `/ab${qs(params)}`;
    },
    runsPage: (p) => {
      const params = new URLSearchParams();
      if (p.groups && p.groups > 1) params.set("groups_page", String(p.groups));
      if (p.jobs && p.jobs > 1) params.set("jobs_page", String(p.jobs));
      const sort = p.sort ?? q.sort;
      if (sort && sort !== "path") params.set("sort", sort);
      if (q.advantage !== "grpo") params.set("advantage", q.advantage);
      return `/${qs(params)}`;
    },
  };
}

/** Anchors of the one exported page: every group and rollout is a section of it. */
export function anchorId(kind: "group" | "rollout", id: string): string {
  return `${kind}-${id.replace(/[^A-Za-z0-9_-]/g, (c) => `.${c.charCodeAt(0).toString(16)}`)}`;
}

export function exportLinks(): Links {
  return {
    home: "#runs",
    group: (id) => `#${anchorId("group", id)}`,
    rollout: (p) => `#${anchorId("rollout", p)}`,
    compare: () => null,
    raw: () => null,
    ab: () => null,
    runsPage: () => null,
  };
}

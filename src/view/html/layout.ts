// The page frame: inline CSS, the small live script (server pages only), and the links between
// views. A served page links by URL; the exported file links by anchor (links.ts).
import { type Html, html, trusted } from "./escape.js";

const CSS = `
body{font:14px/1.45 system-ui,sans-serif;margin:0;color:#1d232b;background:#fafbfc}
header{background:#1d2a3a;color:#fff;padding:8px 16px}header a{color:#fff;text-decoration:none;font-weight:600}
main{padding:12px 16px;max-width:1400px}
h1{font-size:20px;margin:8px 0}h2{font-size:16px;margin:18px 0 6px}
table{border-collapse:collapse;margin:6px 0;background:#fff}
th,td{border:1px solid #d8dde3;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;font-weight:600}
td.num{text-align:right;font-variant-numeric:tabular-nums}
.zero{background:#fde2e1}.withheld{background:#fff3cd}
.badge{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px;background:#e4e7eb;margin-left:4px}
.badge.zero{background:#f8b4b0}.badge.withheld{background:#ffe08a}
pre{white-space:pre-wrap;word-break:break-word;background:#f3f5f7;border:1px solid #e1e5ea;padding:6px;margin:4px 0;max-height:480px;overflow:auto}
.step{border-left:3px solid #c5ccd4;padding:2px 8px;margin:6px 0}
.step.user{border-color:#4b7bd8}.step.assistant{border-color:#3b9a5b}.step.tool{border-color:#c27b1a}
.role{font-weight:600;font-size:12px;color:#5a6570}
.cols{display:grid;grid-template-columns:1fr 1fr;gap:16px}
.kv td:first-child{font-weight:600}
span.tok{font-family:ui-monospace,monospace;font-size:12px;padding:0 1px;border-radius:2px;white-space:pre-wrap;word-break:break-all}
span.tok.masked{background:repeating-linear-gradient(45deg,#eee,#eee 3px,#fff 3px,#fff 6px);color:#888}
.lp0{background:#2e9e4f;color:#fff}.lp1{background:#6bbf59}.lp2{background:#a6d96a}.lp3{background:#d9ef8b}
.lp4{background:#fee08b}.lp5{background:#fdae61}.lp6{background:#f46d43;color:#fff}.lp7{background:#d73027;color:#fff}
nav.pages a{margin-right:8px}.muted{color:#6b7580}
`;

/** The live script: on an event from /events, refetch this page and swap its live regions in place. */
const LIVE = `
(function(){
  if(!window.EventSource)return;
  var t=null;
  function swap(){
    t=null;
    fetch(location.href,{headers:{"accept":"text/html"}}).then(function(r){return r.text()}).then(function(text){
      var doc=new DOMParser().parseFromString(text,"text/html");
      document.querySelectorAll("[data-live]").forEach(function(el){
        var next=doc.getElementById(el.id);
        if(next)el.replaceWith(document.importNode(next,true));
      });
      document.documentElement.setAttribute("data-live-updates",String(Number(document.documentElement.getAttribute("data-live-updates")||0)+1));
    }).catch(function(){});
  }
  var es=new EventSource("/events");
  es.onmessage=function(){if(!t)t=setTimeout(swap,150)};
})();
`;

export interface PageOptions {
  title: string;
  /** The nonce of this response's CSP (server pages); the export has none and no script. */
  nonce?: string;
  live?: boolean;
  home: string;
}

export function page(opts: PageOptions, body: Html): string {
  const nonce = opts.nonce ?? "";
  const csp = opts.nonce
    ? null
    : // The exported file carries its own policy: no script, no fetch, nothing from outside.
      html`<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`;
  const script = opts.live && opts.nonce ? html`<script nonce="${nonce}">${trusted(LIVE)}</script>` : null;
  const doc = html`<!doctype html>
<html lang="en"><head><meta charset="utf-8">${csp}
<meta name="viewport" content="width=device-width,initial-scale=1">
<title>${opts.title}</title>
<style${opts.nonce ? html` nonce="${nonce}"` : ""}>${trusted(CSS)}</style>
</head><body>
<header><a href="${opts.home}">bench view</a> <span class="muted">${opts.title}</span></header>
<main>${body}</main>
${script}
</body></html>
`;
  return doc.value;
}

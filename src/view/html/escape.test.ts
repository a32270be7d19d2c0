import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { html, trusted } from "./escape.js";

describe("html", () => {
  it("escapes every value put into a template, arrays and nested fragments included", () => {
    const evil = `<script>alert('x')</script>" onmouseover="x`;
    const out = html`<p title="${evil}">${evil}${[evil, html`<b>${evil}</b>`]}</p>`.value;
    assert.ok(!out.includes("<script>"));
    assert.ok(!out.includes('" onmouseover'));
    assert.equal(out.match(/<b>/g)?.length, 1);
    assert.equal(
      out.match(/&lt;script&gt;alert\(&#39;x&#39;\)&lt;\/script&gt;&quot; onmouseover=&quot;x/g)?.length,
      4,
    );
  });

  it("leaves out null, undefined and false, and keeps trusted markup as it is", () => {
    assert.equal(html`a${null}${undefined}${false}${0}b${trusted("<i>")}`.value, "a0b<i>");
  });
});

// `bench view` over HTTP (the Chromium tests drive the same pages in a browser): every view answers,
// the numbers are train's, the policy's text comes back inert, raw links stay in the folder, the
// export is one self-contained file, and a non-loopback --host warns.
import assert from "node:assert/strict";
import fs from "node:fs";
import http from "node:http";
import path from "node:path";
import { after, before, describe, it } from "node:test";
import { nameFlags } from "../src/cli/option-flags.js";
import { writeGroup, writePlan, writeRollout } from "../src/jobs-dir/testing/job-builder.js";
import { tmp } from "../src/jobs-dir/testing/tmp.js";
import { nameOptionsWith } from "../src/options.js";
import { startViewServer, type ViewServer } from "../src/view/index.js";
import { bench, startBench } from "./testing/bench.js";

/** GET with the path sent as given (fetch would resolve `..` before sending). */
function rawGet(url: string, p: string): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, path: p, method: "GET" }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

const cells = (page: string, field: string) =>
  [...page.matchAll(new RegExp(`data-field="${field}"[^>]*>([^<]*)<`, "g"))].map((m) => m[1]);

describe("bench view over HTTP", () => {
  const root = tmp("bf-view-");
  const outside = tmp("bf-view-outside-");
  let server: ViewServer;
  let hello: string[];
  let scriptRollout: string;

  before(async () => {
    const rel = (d: string) => path.relative(root, d);
    hello = writeGroup(root, { task: "hello", rewards: [0, 1, 0], tokens: true, calls: 3 }).map((b) =>
      rel(b.dir),
    );
    writeGroup(root, { task: "bye", rewards: [1, null, 1] });
    writeGroup(root, { task: "same", rewards: [1, 1, 1] });
    // A tool output the policy controlled, with markup in it.
    const dir = path.join(root, hello[1] as string);
    scriptRollout = hello[1] as string;
    fs.writeFileSync(
      path.join(dir, "trajectory", "acp_trajectory.jsonl"),
      `${[
        { type: "user_message", text: "Solve hello" },
        { type: "agent_thought", text: "think <b>bold</b>" },
        {
          type: "tool_call",
          tool_call_id: "c1",
          title: "bash",
          kind: "execute",
          status: "completed",
          raw_input: { command: "cat x.html" },
          raw_output: '<script>alert("pwned")</script><img src=x onerror=alert(1)>',
        },
        { type: "agent_message", text: "done" },
      ]
        .map((e) => JSON.stringify(e))
        .join("\n")}\n`,
    );
    fs.mkdirSync(path.join(dir, "verifier"));
    fs.writeFileSync(path.join(dir, "verifier", "test-stdout.txt"), "1 passed <in> 0.1s\n");
    fs.writeFileSync(path.join(outside, "secret.txt"), "secret\n");
    fs.symlinkSync(path.join(outside, "secret.txt"), path.join(dir, "leak.txt"));
    fs.symlinkSync(outside, path.join(dir, "leakdir"));
    fs.symlinkSync("result.json", path.join(dir, "inside.json"));
    server = await startViewServer({ jobsDir: root });
  });
  after(() => server?.close());

  const get = async (p: string) => {
    const res = await fetch(new URL(p, server.url));
    return { status: res.status, headers: res.headers, body: await res.text() };
  };
  const groupId = async (task: string) => {
    const home = (await get("/")).body;
    const m = new RegExp(`data-group-id="([^"]+)"[^>]*>\\s*<td><a href="([^"]+)">task=${task} `).exec(home);
    assert.ok(m, `a row for group ${task}`);
    return { id: m[1] as string, href: m[2] as string };
  };

  it("serves the runs page on loopback with the run's numbers and the group key used", async () => {
    assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+\/$/);
    const r = await get("/");
    assert.equal(r.status, 200);
    assert.deepEqual(cells(r.body, "rollouts"), ["9"]);
    // Rewards 0,1,0 + 1,1 (one unscored) + 1,1,1: mean over the 8 scored.
    assert.deepEqual(cells(r.body, "mean-reward"), [(6 / 8).toFixed(3)]);
    // Three trial-NN repeat jobs of one run: the default groups by the run (never the job), so a
    // group is the repeats; the key shown is the default's, as convert and stream use it.
    assert.match(r.body, /data-testid="group-key">task,agent,model,run,task_digest,policy_version,sampling</);
    assert.equal((r.body.match(/<tr data-group-id=/g) ?? []).length, 3);
  });

  it("orders the groups table by spread or mean on request, train's order by default", async () => {
    const order = async (q: string) =>
      [...(await get(`/${q}`)).body.matchAll(/<td><a href="[^"]+">task=(\w+) /g)].map((m) => m[1]);
    assert.deepEqual(await order(""), ["bye", "hello", "same"]);
    assert.deepEqual(await order("?sort=spread"), ["hello", "same", "bye"]);
    // A withheld group has no mean: last.
    assert.deepEqual(await order("?sort=-mean"), ["same", "hello", "bye"]);
    assert.match((await get("/")).body, /data-testid="sort-spread"/);
  });

  it("a group page shows train's advantages and switches between grpo and loo", async () => {
    const { href } = await groupId("hello");
    const r = await get(href);
    assert.equal(r.status, 200);
    assert.deepEqual(cells(r.body, "advantage"), ["-0.577", "1.155", "-0.577"]);
    assert.deepEqual(cells(r.body, "reward"), ["0.000", "1.000", "0.000"]);
    for (const p of hello) assert.ok(r.body.includes(`data-rollout="${p}"`));
    const loo =
      /data-testid="advantage-loo"/.test(r.body) &&
      r.body.match(/href="([^"]+)" data-testid="advantage-loo"/);
    assert.ok(loo);
    const l = await get((loo[1] as string).replaceAll("&amp;", "&"));
    assert.deepEqual(cells(l.body, "advantage"), ["-0.500", "1.000", "-0.500"]);
    assert.doesNotMatch(r.body, /data-testid="zero-spread"/);
  });

  it("marks a withheld group with its reason and a zero-spread group", async () => {
    const w = await get((await groupId("bye")).href);
    assert.match(w.body, /data-testid="withheld-reason">unscored_member</);
    assert.deepEqual(cells(w.body, "advantage"), ["—", "—", "—"]);
    const z = await get((await groupId("same")).href);
    assert.match(z.body, /data-testid="zero-spread"/);
    assert.deepEqual(cells(z.body, "advantage"), ["0.000", "0.000", "0.000"]);
  });

  it("a rollout page renders what the policy wrote as text, under a CSP with a nonce", async () => {
    const r = await get(`/rollouts/${scriptRollout}`);
    assert.equal(r.status, 200);
    assert.ok(
      r.body.includes(
        "&lt;script&gt;alert(&quot;pwned&quot;)&lt;/script&gt;&lt;img src=x onerror=alert(1)&gt;",
      ),
    );
    assert.ok(!r.body.includes("<script>alert"));
    assert.ok(!r.body.includes("<img src=x"));
    assert.ok(r.body.includes("think &lt;b&gt;bold&lt;/b&gt;"));
    const csp = r.headers.get("content-security-policy") ?? "";
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    assert.ok(nonce && csp.startsWith("default-src 'self'"), csp);
    // Every script on the page is ours: it carries this response's nonce.
    const scripts = [...r.body.matchAll(/<script([^>]*)>/g)].map((m) => m[1]);
    assert.ok(scripts.length >= 1);
    for (const s of scripts) assert.equal(s, ` nonce="${nonce}"`);
    assert.match(r.body, /data-testid="tool-call"/);
    assert.match(r.body, /data-testid="verifier-output">1 passed &lt;in&gt; 0.1s/);
    assert.match(r.body, /data-testid="instruction"/);
    assert.match(r.body, /<tr data-key="reward">/);
  });

  it("shows captured tokens with logprobs and the model calls' latency", async () => {
    const r = await get(`/rollouts/${hello[0]}`);
    assert.equal((r.body.match(/data-testid="model-call"/g) ?? []).length, 3);
    assert.deepEqual(cells(r.body, "latency").slice(0, 1), ["500 ms"]);
    const toks = [...r.body.matchAll(/<span class="tok (lp\d)" data-logprob="([^"]+)"/g)];
    assert.equal(toks.length, 6);
    assert.deepEqual(
      toks.slice(0, 2).map((t) => t[2]),
      ["-0.5", "-0.25"],
    );
    // The trajectory came from the last call's conversation: two tool calls and their outputs.
    assert.equal((r.body.match(/data-testid="tool-call"/g) ?? []).length, 2);
  });

  it("compare, A/B, raw and events answer", async () => {
    const c = await get(
      `/compare?a=${encodeURIComponent(hello[0] as string)}&b=${encodeURIComponent(hello[1] as string)}`,
    );
    assert.equal(c.status, 200);
    assert.match(c.body, /data-side="a"[\s\S]*data-side="b"/);
    assert.equal((await get("/ab")).status, 200);
    const raw = await get(`/raw/${hello[0]}/result.json`);
    assert.equal(raw.status, 200);
    assert.match(raw.headers.get("content-type") ?? "", /^text\/plain/);
    assert.equal(JSON.parse(raw.body).task_name, "hello");
    assert.equal((await get(`/raw/${scriptRollout}/inside.json`)).status, 200);
    const ac = new AbortController();
    const ev = await fetch(new URL("/events", server.url), { signal: ac.signal });
    assert.match(ev.headers.get("content-type") ?? "", /text\/event-stream/);
    const first = await ev.body?.getReader().read();
    assert.match(new TextDecoder().decode(first?.value), /data: \{"type":"hello"/);
    ac.abort();
    assert.equal((await get("/rollouts/no/such")).status, 404);
    assert.equal((await get("/groups/nope")).status, 404);
  });

  it("raw links cannot leave the jobs folder: .., absolute paths and symlinks out are 404", async () => {
    for (const p of [
      "/raw/../../../../etc/passwd",
      "/raw/%2e%2e/%2e%2e/%2e%2e/etc/passwd",
      "/raw/..%2F..%2F..%2Fetc%2Fpasswd",
      "/raw/%2Fetc%2Fpasswd",
      "/raw//etc/passwd",
      `/raw/${scriptRollout}/leak.txt`,
      `/raw/${scriptRollout}/leakdir/secret.txt`,
      `/raw/${scriptRollout}`,
    ]) {
      const r = await rawGet(server.url, p);
      assert.equal(r.status, 404, p);
      assert.ok(!r.body.includes("secret") && !r.body.includes("root:"), p);
    }
  });

  it("a rollout that finishes while the page is open arrives on /events and in the page", async () => {
    const ac = new AbortController();
    const ev = await fetch(new URL("/events", server.url), { signal: ac.signal });
    const reader = (ev.body as ReadableStream<Uint8Array>).getReader();
    await reader.read(); // hello
    const job = path.join(root, "bench-agent", "trial-01", "2026-01-01__12-00-00");
    const added = writeRollout(job, { task: "late", reward: 1 });
    const want = path.relative(root, added.dir);
    let text = "";
    const guard = setTimeout(() => ac.abort(), 60_000);
    try {
      while (!text.includes(want)) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
    } finally {
      clearTimeout(guard);
      ac.abort();
    }
    assert.ok(text.includes(`"type":"rollout","path":"${want}"`), text);
    assert.deepEqual(cells((await get("/")).body, "rollouts"), ["10"]);
  });

  for (const poll of [false, true])
    it(`a rollout that starts and then finishes is followed to its result (${poll ? "polling" : "watching"})`, async () => {
      const live = tmp("bf-view-live-");
      writeGroup(live, { task: "first", rewards: [1, 0] });
      const s = await startViewServer({ jobsDir: live, poll });
      const ac = new AbortController();
      const guard = setTimeout(() => ac.abort(), 60_000);
      try {
        const ev = await fetch(new URL("/events", s.url), { signal: ac.signal });
        const reader = (ev.body as ReadableStream<Uint8Array>).getReader();
        let text = "";
        const until = async (want: string) => {
          while (!text.includes(want)) {
            const { value, done } = await reader.read();
            if (done) throw new Error(`events ended before ${want}: ${text}`);
            text += new TextDecoder().decode(value);
          }
          text = "";
        };
        await until('"type":"hello"');
        // As bench run writes it: the folder and its config first, result.json renamed in last.
        // A third repeat (a job of its own): in trial-02 it would be a retry of that trial's attempt.
        const job = path.join(live, "bench-agent", "trial-03", "2026-01-01__12-00-00");
        // bench run writes the job's plan (evaluation.json, with the run's sampling) before any rollout.
        writePlan({ dir: job, rollouts: [] }, ["first"]);
        const started = writeRollout(job, { task: "first", reward: 1, result: "missing" });
        const p = path.relative(live, started.dir);
        await until(`"path":"${p}"`);
        const home = async () => await (await fetch(s.url)).text();
        assert.deepEqual(cells(await home(), "rollouts"), ["3"]);
        const group = /data-group-id="[^"]+"[^>]*>\s*<td><a href="([^"]+)"/.exec(await home())?.[1] as string;
        assert.match(
          await (await fetch(new URL(group, s.url))).text(),
          /data-testid="withheld-reason">missing_result</,
        );
        fs.writeFileSync(
          path.join(started.dir, ".r.tmp"),
          JSON.stringify({
            task_name: "first",
            rollout_name: path.basename(p),
            agent: "bench-agent",
            model: "vllm/policy",
            rewards: { reward: 1 },
          }),
        );
        fs.renameSync(path.join(started.dir, ".r.tmp"), path.join(started.dir, "result.json"));
        // A rollout still without its result is re-read (and announced) at every refresh, so an
        // event for it may be one from before the rename: wait on events until the page has it.
        const groupPage = async () => await (await fetch(new URL(group, s.url))).text();
        await until(`"path":"${p}"`);
        let after = await groupPage();
        while (/data-testid="withheld-reason"/.test(after)) {
          await until(`"path":"${p}"`);
          after = await groupPage();
        }
        assert.doesNotMatch(after, /data-testid="withheld-reason"/);
        assert.deepEqual(cells(after, "reward"), ["1.000", "0.000", "1.000"]);
      } finally {
        clearTimeout(guard);
        ac.abort();
        await s.close();
      }
    });

  it("--export writes one self-contained page, links as anchors, nothing from outside", async () => {
    const out = path.join(outside, "run.html");
    const r = await bench(["view", root, "--export", out]);
    assert.equal(r.code, 0, r.stderr);
    const page = fs.readFileSync(out, "utf8");
    assert.doesNotMatch(page, /(src|href)\s*=\s*["']?\s*(https?:)?\/\//i);
    assert.doesNotMatch(page, /<script/i);
    assert.doesNotMatch(page, /<link /i);
    for (const m of page.matchAll(/href="([^"]*)"/g)) assert.ok((m[1] as string).startsWith("#"), m[1]);
    // Every anchor a link names is in the page.
    for (const m of page.matchAll(/href="#([^"]*)"/g)) assert.ok(page.includes(`id="${m[1]}"`), m[1]);
    assert.match(page, /data-testid="withheld-reason">unscored_member</);
    assert.ok(page.includes("&lt;script&gt;alert"));
    assert.ok(!fs.readdirSync(outside).some((f) => f.endsWith(".tmp")));
  });

  it("warns that a non-loopback --host shows the trajectories to the network", async () => {
    const child = startBench(["view", root, "--host", "0.0.0.0", "--port", "0", "--no-open"]);
    let stdout = "";
    let stderr = "";
    child.stderr?.on("data", (d) => (stderr += d));
    await new Promise<void>((resolve, reject) => {
      const guard = setTimeout(() => reject(new Error(`no URL printed: ${stderr}`)), 60_000);
      child.stdout?.on("data", (d) => {
        stdout += d;
        if (/http:\/\/\S+/.test(stdout)) {
          clearTimeout(guard);
          resolve();
        }
      });
    });
    const url = /http:\/\/\S+/.exec(stdout)?.[0] as string;
    assert.equal((await fetch(url)).status, 200);
    child.kill("SIGTERM");
    await new Promise((r) => child.on("close", r));
    assert.match(stderr, /warning: --host 0\.0\.0\.0 is not loopback: every trajectory/);
  });

  it("a port in use and a folder that is not there are the user's to fix, named in one line", async () => {
    const port = Number(new URL(server.url).port);
    // As the command names it; from code the same line names the option (`port: "N"`).
    nameFlags();
    await assert
      .rejects(startViewServer({ jobsDir: root, port }), /^UserInputError: --port \d+: already in use/)
      .finally(() => nameOptionsWith(null));
    await assert.rejects(
      startViewServer({ jobsDir: root, port }),
      /^UserInputError: port: "\d+": already in use/,
    );
    const r = await bench(["view", path.join(root, "nope")]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^bench view: .*nope: no such folder; give the jobs folder bench run wrote/);
  });

  it("a bad --group-by is one line naming the flag, exit 2", async () => {
    const r = await bench(["results", root, "--group-by", "task,colour"]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /^bench results: --group-by: unknown key "colour"/);
    assert.equal(r.stderr.trim().split("\n").length, 1);
  });
});

// Two arms of a --skill-mode A/B (config.json's skill_mode per rollout): each arm's totals and each
// task's mean in each arm, and the pair of arms linked from the A/B page.
describe("bench view: the A/B page over two --skill-mode arms", () => {
  const root = tmp("bf-view-ab-");
  let server: ViewServer;

  before(async () => {
    const arm = (jobName: string, mode: string, task: string, rewards: number[]) => {
      for (const r of writeGroup(root, { task, rewards, jobName })) {
        const file = path.join(r.dir, "config.json");
        const config = JSON.parse(fs.readFileSync(file, "utf8"));
        fs.writeFileSync(file, JSON.stringify({ ...config, skill_mode: mode }));
      }
    };
    arm("with", "with-skill", "hello", [1, 1, 0.5]);
    arm("with", "with-skill", "bye", [1, 0]);
    arm("without", "no-skill", "hello", [0, 0.5, 0]);
    arm("without", "no-skill", "bye", [0, 0]);
    server = await startViewServer({ jobsDir: root });
  });
  after(() => server?.close());

  const text = async (p: string) => {
    const res = await fetch(new URL(p, server.url));
    assert.equal(res.status, 200, p);
    return res.text();
  };

  it("shows each arm's rollouts and mean reward, and each task's difference", async () => {
    const page = await text("/ab?by=skill_mode&a=no-skill&b=with-skill");
    const arm = (side: string, field: string) =>
      [...page.matchAll(new RegExp(`data-arm="${side}" data-field="${field}">([^<]*)<`, "g"))].map(
        (m) => m[1],
      );
    assert.deepEqual(arm("a", "rollouts"), ["5"]);
    assert.deepEqual(arm("b", "rollouts"), ["5"]);
    assert.deepEqual(arm("a", "mean-reward"), ["0.100"]);
    assert.deepEqual(arm("b", "mean-reward"), ["0.700"]);
    const row = (task: string) =>
      [
        ...(new RegExp(`<tr data-task="${task}">([\\s\\S]*?)</tr>`).exec(page)?.[1] ?? "").matchAll(
          /<td[^>]*>([^<]*)</g,
        ),
      ].map((m) => m[1]);
    assert.deepEqual(row("hello"), ["hello", "0.167", "0.833", "0.667"]);
    assert.deepEqual(row("bye"), ["bye", "0.000", "0.500", "0.500"]);
  });

  it("the page without a pair links the arms it found", async () => {
    const page = await text("/ab?by=skill_mode");
    assert.match(page, /Pick two arms/);
    const pairs = [...page.matchAll(/data-testid="arm-pair">([^<]*)</g)].map((m) => m[1]);
    assert.equal(pairs.length, 1, page);
    assert.match(pairs[0] ?? "", /^(with-skill vs no-skill|no-skill vs with-skill)$/);
  });
});

// The secret shapes are pinned with upstream's own examples (benchflow tests/trajectories/
// test_redaction.py): the same inputs, what must go, what must stay. Fake tokens are built from
// split literals, as upstream does, so no whole token shape sits in the source.
import assert from "node:assert/strict";
import fs from "node:fs";
import { describe, it } from "node:test";
import { REDACTED } from "./patterns.js";
import { pythonJson, redactText, redactValue } from "./redact.js";
import { redactRow } from "./rows.js";

const FAKE_GHP = `ghp_${"16C7e42F292c6912E7710c838347Ae178B4abcde"}`;
const FAKE_GH_PAT = `github${"_pat_"}11ABCDE0Y0abcdefghij_klmnopqrstuvwxyz0123456789`;
const FAKE_XOXB = `xox${"b-"}1234567890-0987654321-abcDEFghiJKLmnoPQR`;
const FAKE_MASTER_KEY = `sk-${"benchflow-"}FAKEmasterKEYvalue1234567890abcd`;
const FAKE_SVCACCT = `sk-${"svcacct-"}T3BlbkFJFAKEsvcacct0123456789ab`;
const FAKE_ADMIN = `sk-${"admin-"}T3BlbkFJFAKEadminkey0123456789ab`;
const FAKE_OPENROUTER = `sk-${"or-v1-"}0123fakeOPENROUTER456789abcdef0123456789`;
const FAKE_URL_PW = `s3cret${"P4sswordVALUE"}`;
const FAKE_DB_PW = `Db${"Pr0dPassValue123"}`;
const FAKE_BEARER_TOK = `bearersecret${"value1234567890"}`;
const FAKE_QUERY_SECRET = `GENERICQUERY${"SECRETvalue12345"}`;
const FAKE_BEDROCK = `bedrocksecret${"value123456"}`;
const FAKE_JWT = `eyJ${"hbGciOiJIUzI1NiJ9"}.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dQw4w9WgXcQfakeSIGNATURE12`;

// [input, what must not survive, what must survive (or null)]
const LEAKS: Array<[string, string, string | null]> = [
  [
    '{"key": "sk-ant-api03-abc123XYZ_defghijklmnopqrstuvwxyz0123456789"}',
    "defghijklmnopqrstuvwxyz0123456789",
    null,
  ],
  [
    '{"key": "sk-proj-abc123XYZ_defghijklmnopqrstuvwxyz0123456789"}',
    "defghijklmnopqrstuvwxyz0123456789",
    null,
  ],
  ['{"key": "sk-abc1234567defghijklmnopqrstuvwxyz"}', "defghijklmnopqrstuvwxyz", null],
  ['{"key": "AIzaSyFAKEKEYFORTESTSONLYxxxxxxxxxxxxxxx"}', "FORTESTSONLYxxxxxxxxxxxxxxx", null],
  ['{"key": "AKIAIOSFODNN7EXAMPLE"}', "IOSFODNN7EXAMPLE", null],
  ['{"key": "ASIAQWERTYUIOPASDFGH"}', "QWERTYUIOPASDFGH", null],
  ['{"key": "dtn_abcdefghijklmnop1234567890"}', "ghijklmnop1234567890", null],
  [
    '{"authorization": "Bearer eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.secret"}',
    "eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.secret",
    null,
  ],
  [
    '{"x-api-key": "AIzaSyFAKEKEYFORTESTSONLYxxxxxxxxxxxxxxx"}',
    "AIzaSyFAKEKEYFORTESTSONLYxxxxxxxxxxxxxxx",
    null,
  ],
  ['{"api-key": "abc123secret456value"}', "abc123secret456value", null],
  [`{"key": "${FAKE_GHP}"}`, "16C7e42F292c6912E7710c838347Ae178B4abcde", null],
  [`{"key": "${FAKE_GH_PAT}"}`, "11ABCDE0Y0abcdefghij_klmnopqrstuvwxyz0123456789", null],
  [`{"key": "${FAKE_XOXB}"}`, "1234567890-0987654321-abcDEFghiJKLmnoPQR", null],
  ["GITHUB_TOKEN=plainvaluewithnoprefix12345", "plainvaluewithnoprefix12345", "GITHUB_TOKEN"],
  // Raw header and key=value forms (env dumps, curl -v).
  ["x-api-key: abc123secret456value", "abc123secret456value", null],
  ["api-key=abc123secret456value", "abc123secret456value", null],
  ["api_key: abc123secret456value", "abc123secret456value", null],
  ["x-goog-api-key: AIzaSyFAKEKEYFORTESTSONLYxxxxxxxxxxxxxxx", "FORTESTSONLYxxxxxxxxxxxxxxx", null],
  ["authorization: Token abc123secret456value", "abc123secret456value", null],
  ["authorization: Basic dXNlcjpwYXNzd29yZGZ4eA==", "dXNlcjpwYXNz", null],
  ["Authorization: bare-token-value-aaaa", "bare-token-value-aaaa", null],
  ["GEMINI_API_KEY=plainSecretNoPrefix123", "plainSecretNoPrefix123", "GEMINI_API_KEY="],
  ['{"openai_api_key": "plainSecretNoPrefix123"}', "plainSecretNoPrefix123", "openai_api_key"],
  ["AZURE_OPENAI_API_KEY=anotherPlainSecret456", "anotherPlainSecret456", "AZURE_OPENAI_API_KEY="],
  // Provider failure texts.
  [`connecting to https://admin:${FAKE_URL_PW}@proxy.internal/v1`, FAKE_URL_PW, "proxy.internal"],
  [`could not connect: postgres://litellm:${FAKE_DB_PW}@db.internal:5432/x`, FAKE_DB_PW, "db.internal"],
  [`ConnectionError redis://:${FAKE_DB_PW}@cache.prod:6379/0`, FAKE_DB_PW, "cache.prod"],
  [`{"master_key": "${FAKE_MASTER_KEY}"}`, "FAKEmasterKEYvalue1234567890abcd", null],
  [`Incorrect API key provided: ${FAKE_SVCACCT}`, "T3BlbkFJFAKEsvcacct0123456789ab", null],
  [`AuthenticationError: ${FAKE_ADMIN}`, "T3BlbkFJFAKEadminkey0123456789ab", null],
  [
    `OpenrouterException - invalid api key ${FAKE_OPENROUTER}`,
    "0123fakeOPENROUTER456789abcdef0123456789",
    null,
  ],
  [`Authorization: Bearer ${FAKE_MASTER_KEY}`, "FAKEmasterKEYvalue1234567890abcd", "Bearer"],
  [`AWS_BEARER_TOKEN_BEDROCK=${FAKE_BEDROCK} set`, FAKE_BEDROCK, "AWS_BEARER_TOKEN_BEDROCK"],
  [`headers={'Authorization': 'Bearer ${FAKE_BEARER_TOK}'}`, FAKE_BEARER_TOK, "Bearer"],
  [`headers={'x-api-key': '${FAKE_BEARER_TOK}'}`, FAKE_BEARER_TOK, null],
  [`GET https://api/v1/x?apikey=${FAKE_QUERY_SECRET}&page=2`, FAKE_QUERY_SECRET, "page=2"],
  [`https://api/v1/x?access_token=${FAKE_QUERY_SECRET}&z=1`, FAKE_QUERY_SECRET, "z=1"],
  [
    `blob fetch failed https://acct.blob/c/f?sv=2023-01-01&sig=${FAKE_QUERY_SECRET}&se=x`,
    FAKE_QUERY_SECRET,
    "sv=2023-01-01",
  ],
  [`https://api?sessionid=${FAKE_QUERY_SECRET}&b=2`, FAKE_QUERY_SECRET, "b=2"],
  [
    `groq AuthenticationError: gsk_${"FAKEgroq0123456789ABCDEF01234567"}`,
    "FAKEgroq0123456789ABCDEF01234567",
    null,
  ],
  [`xai exception: xai-${"FAKExai0123456789ABCDEF012345678"}`, "FAKExai0123456789ABCDEF012345678", null],
  [`replicate 401: r8_${"FAKErepl0123456789ABCDEF01234567"}`, "FAKErepl0123456789ABCDEF01234567", null],
  [`hf inference error hf_${"FAKEhugg0123456789ABCDEF01234567"}`, "FAKEhugg0123456789ABCDEF01234567", null],
  [`fireworks auth fail fw_${"FAKEfire0123456789ABCDEF01234567"}`, "FAKEfire0123456789ABCDEF01234567", null],
  [`token expired: ${FAKE_JWT}`, "dQw4w9WgXcQfakeSIGNATURE12", null],
  [
    `AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPx${"RfiCYsecretKEYval"}`,
    "wJalrXUtnFEMIK7MDENGbPxRfiCYsecretKEYval",
    "AWS_SECRET_ACCESS_KEY",
  ],
  [
    `AZURE_STORAGE_ACCOUNT_KEY=base64acct${"AAAABBBBCCCCDDDDEEEE=="}`,
    "base64acctAAAABBBBCCCCDDDDEEEE==",
    "AZURE_STORAGE_ACCOUNT_KEY",
  ],
  [
    '{"private_key": "-----BEGIN PRIVATE KEY-----\\nMIIEvQIBADANBgkqPEMfakeSECRETmaterial12345\\n-----END PRIVATE KEY-----"}',
    "PEMfakeSECRETmaterial12345",
    null,
  ],
  [`redis://admin:p@ss${"w0rdSECRETval"}@cache.internal:6379/0`, "p@ssw0rdSECRETval", "cache.internal"],
  [`AuthError: sk-${"admin-"}T3BlbkFJFAKEadminKEY0123456789ab`, "T3BlbkFJFAKEadminKEY0123456789ab", null],
];

// Inputs that resemble a secret but are not one: they come out unchanged.
const CLEAN = [
  '{"role": "user", "content": "Write a Python script to process data"}',
  '{"region": "ASIAPACIFIC"}',
  '{"id": "ASIANEWS2024UPDATED"}',
  '{"queue": "task-sk-us-east-1-foo-bar-baz"}',
  '{"job": "workspace-sk-us-east-1-extra"}',
  '{"label": "dtn_v2_0"}',
  '{"name": "dtn_test"}',
  '{"name": "AIzaSy"}',
  '{"url": "https://example.com:8080/v1/chat"}',
  "redis://cache.internal:6379/0",
  "https://localhost:8080?login_hint=user@example.com",
  "GET https://auth.example.com:8443?login_hint=alice@corp.com&state=xyz",
  "https://h:9000?a=1&b=2&c=x@d.com&keepme=yes",
  "https://api/v1/list?page=2&limit=10&sortkey=name",
  "https://api/search?monkey=banana&donkey=kong",
  "https://api/v1?author=jane&keyboard=qwerty&pwd2=keepme",
  "https://api/items?key=name&order=asc",
  "https://api/login?auth=basic&user=bob",
  "https://x.com/cb?sig=v2&id=42",
  "TOKENIZER_PATH=/models/tokenizer.json",
  '{"sortkey": "created_at", "pagekey": "next"}',
  "primary_key=id_column",
  "{'foreign_key': 'user_id'}",
  "sort_key=created_at",
  "SECRETARY_NAME=Jane",
  "MONKEY=banana",
  "{'role': 'user', 'content': 'hello world'}",
  "git checkout sk-proj-refactor-auth-module",
  "kubectl create sa sk-admin-cluster-operator-prod",
  "result = eyJsonObject.parseColumns.getValuesFrom(input)",
  "msg=eyJ0eXBlIjoiUElORyJ9.eyJzZXEiOjEwMDB9.eyJhY2siOnRydWV9",
  "vscode://file:line@/path",
  "headers={'Authorization': f'Bearer {token}'}",
];

describe("redactText: upstream's secret shapes", () => {
  for (const [raw, leaked, kept] of LEAKS) {
    it(`redacts ${raw.slice(0, 60)}`, () => {
      const { value, count } = redactText(raw);
      assert.ok(value.includes(REDACTED), value);
      assert.ok(!value.includes(leaked), value);
      assert.ok(count > 0);
      if (kept !== null) assert.ok(value.includes(kept), `over-redacted: ${value}`);
    });
  }

  for (const raw of CLEAN) {
    it(`leaves ${raw.slice(0, 60)} alone`, () => {
      assert.deepEqual(redactText(raw), { value: raw, count: 0, categories: {} });
    });
  }

  it("keeps env names in a dump and redacts every value", () => {
    const dump = [
      "GEMINI_API_KEY=AIzaSyFAKEKEYFORTESTSONLYxxxxxxxxxxxxxxx",
      "DAYTONA_API_KEY=dtn_FAKEFAKEFAKEFAKEFAKE12345678",
      `GITHUB_TOKEN=${FAKE_GHP}`,
      `SLACK_TOKEN=${FAKE_XOXB}`,
      "x-api-key: abc123secret456value",
    ].join("\n");
    const { value } = redactText(dump);
    for (const gone of ["AIzaSyFAKE", "dtn_FAKE", FAKE_GHP, FAKE_XOXB, "abc123secret456value"])
      assert.ok(!value.includes(gone), value);
    assert.ok(value.includes("GITHUB_TOKEN") && value.includes("SLACK_TOKEN"));
  });

  it("counts by category, as upstream does", () => {
    const text =
      "sk-abc1234567defghijklmnop987654 and GITHUB_TOKEN=prefixlessSecretValue1234567890 and https://user:hunter2@host/";
    assert.deepEqual(redactText(text).categories, {
      "API key": 1,
      "credential-bearing field value": 1,
      "URL credential": 1,
    });
  });

  it("does not match its own marker again (a second pass changes nothing)", () => {
    const raw = `GET https://api/v1?access_token=${FAKE_QUERY_SECRET}&sig=${FAKE_QUERY_SECRET}${FAKE_QUERY_SECRET}&page=2`;
    const once = redactText(raw);
    assert.equal(once.count, 2);
    assert.ok(once.value.includes("?access_token=***REDACTED***") && once.value.endsWith("&page=2"));
    assert.deepEqual(redactText(once.value), { value: once.value, count: 0, categories: {} });
  });

  it("takes `sk-` for a key only where it starts a word, unlike upstream (Claude Code's tool descriptions)", () => {
    // Upstream writes "you receive a <ta***REDACTED***> with the same" (docs/known-pitfalls.md).
    assert.deepEqual(redactText("you receive a <task-notification> with the same"), {
      value: "you receive a <task-notification> with the same",
      count: 0,
      categories: {},
    });
    assert.equal(redactText(`key sk-${"a1b2c3d4e5f6g7h8"} and (sk-ant-${"a1b2c3d4e5f6g7h8"})`).count, 2);
  });

  it("redacts carriers in JSON escaped twice", () => {
    const secret = `DBL${"771b8b5e9f2a4c6d8e0f1a2b"}`;
    const double = JSON.stringify(JSON.stringify(`{"api-key": "${secret}"}`));
    assert.ok(!redactText(double).value.includes(secret));
  });
});

describe("redactValue", () => {
  const PREFIXLESS = "prefixlessSecretValue1234567890";

  it("redacts a prefixless secret by its field name, and only the value", () => {
    const out = redactValue({
      headers: { "x-api-key": PREFIXLESS },
      api_key: PREFIXLESS,
      authorization: `Bearer ${PREFIXLESS}`,
      note: "plain text",
      n: 5,
      ok: true,
    });
    assert.deepEqual(out.value, {
      headers: { "x-api-key": REDACTED },
      api_key: REDACTED,
      authorization: `Bearer ${REDACTED}`,
      note: "plain text",
      n: 5,
      ok: true,
    });
    assert.equal(out.count, 3);
  });

  it("keeps JSON valid when a secret sits next to an escape", () => {
    const contents = [
      "auth header:\\sk-abc1234567defghijklmnop987654",
      'token = form.get("token")\n    if not token:\n        raise HTTPException(400, "invalid")  # key sk-abc1234567defghijklmnop987654\n',
      "C:\\Users\\app\\AKIAIOSFODNN7EXAMPLE",
      '{"x-api-key": "AIzaSyFAKEKEYFORTESTSONLYxxxxxxxxxxxxxxx"}',
    ];
    for (const content of contents) {
      const line = JSON.stringify(redactValue({ messages: [{ role: "user", content }] }).value);
      JSON.parse(line);
      for (const leaked of [
        "abc1234567defghijklmnop987654",
        "IOSFODNN7EXAMPLE",
        "FORTESTSONLYxxxxxxxxxxxxxxx",
      ])
        assert.ok(!line.includes(leaked), line);
    }
  });

  it("leaves code that names a token alone", () => {
    const content = 'class Token:\n    """Immutable token representation."""\n    value: str\n';
    assert.equal(redactValue({ messages: [{ role: "user", content }] }).count, 0);
  });
});

// Upstream's redactor run on 360 inputs (secret-shaped fragments joined at random): our rules give
// its output exactly, replacement for replacement.
describe("parity with upstream's redactor (its own output)", () => {
  const fixture = JSON.parse(
    fs.readFileSync(new URL("../fixtures/upstream-redactions.json", import.meta.url), "utf8"),
  ) as {
    text: Array<{ input: string; output: string; replacements: number }>;
    value: Array<{ input: unknown; output: unknown }>;
  };

  it("text: the same output and the same count, except where upstream takes `sk-` inside a word", () => {
    assert.ok(fixture.text.length > 200);
    const inWord = /[A-Za-z0-9]sk-/;
    let apart = 0;
    for (const c of fixture.text) {
      const r = redactText(c.input);
      if (inWord.test(c.input)) {
        // Our deliberate difference: the word is kept, and no secret of any family survives it.
        apart++;
        assert.equal(redactText(r.value).count, 0, JSON.stringify(c.input));
        continue;
      }
      assert.equal(r.value, c.output, JSON.stringify(c.input));
      assert.equal(r.count, c.replacements, JSON.stringify(c.input));
    }
    assert.ok(apart < fixture.text.length / 4, `${apart} of ${fixture.text.length} cases set apart`);
  });

  it("values: the same output, fields redacted with their names in view", () => {
    assert.ok(fixture.value.length > 50);
    for (const c of fixture.value)
      assert.deepEqual(redactValue(c.input).value, c.output, JSON.stringify(c.input));
  });
});

describe("pythonJson", () => {
  it("writes json.dumps's separators and escapes non-ASCII", () => {
    assert.equal(pythonJson({ a: "é", b: [1, null, true] }), '{"a": "\\u00e9", "b": [1, null, true]}');
  });
});

describe("redactRow", () => {
  const tally = () => ({ rowsRedacted: 0, secretsRedacted: 0 });

  it("redacts prime-sft tool-call arguments like upstream (malformed JSON stays a string, redacted as text)", () => {
    // upstream test_export_redacts_malformed_tool_call_arguments_before_serializing
    const args = '{"command": "curl -d \\"password=sk-abc1234567890def" | jq .", "summary": "request token"}';
    const t = tally();
    const row = redactRow(
      {
        messages: [
          { role: "assistant", content: "", tool_calls: [{ function: { name: "bash", arguments: args } }] },
        ],
      },
      true,
      t,
    );
    assert.equal(
      row.messages[0]?.tool_calls[0]?.function.arguments,
      '{"command": "curl -d \\"password=***REDACTED***" | jq .", "summary": "request token"}',
    );
    assert.deepEqual(t, { rowsRedacted: 1, secretsRedacted: 1 });
  });

  it("redacts a secret-named argument inside the arguments string, keeping its formatting (as upstream)", () => {
    const t = tally();
    const row = redactRow(
      {
        messages: [
          {
            role: "assistant",
            tool_calls: [{ function: { name: "login", arguments: '{"user":"bob","password":"hunter2"}' } }],
          },
        ],
      },
      true,
      t,
    );
    assert.equal(
      row.messages[0]?.tool_calls[0]?.function.arguments,
      '{"user":"bob","password":"***REDACTED***"}',
    );
    assert.equal(t.rowsRedacted, 1);
  });

  it("keeps a clean row's argument strings byte for byte, and changes nothing with redact off", () => {
    // upstream test_export_no_redact_preserves_private_tool_call_argument_strings
    const args = JSON.stringify({
      command:
        "python3 - <<'PY'\nheaders={'Authorization': f'Bearer {token}'}\nprint('password=password123')\nPY",
      timeout: 10,
    });
    const row = {
      messages: [{ role: "assistant", tool_calls: [{ function: { name: "t", arguments: args } }] }],
    };
    const t = tally();
    assert.equal(redactRow(row, false, t), row);
    assert.deepEqual(t, { rowsRedacted: 0, secretsRedacted: 0 });
    const on = redactRow(row, true, t);
    assert.ok(!on.messages[0]?.tool_calls[0]?.function.arguments.includes("password123"));
    const clean = {
      messages: [{ role: "assistant", tool_calls: [{ function: { name: "t", arguments: '{"a":1}' } }] }],
    };
    assert.equal(redactRow(clean, true, t).messages[0]?.tool_calls[0]?.function.arguments, '{"a":1}');
  });
});

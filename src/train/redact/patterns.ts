// The secret shapes upstream BenchFlow redacts when it exports training rows (its canonical
// trajectory redactor), in its order: a whole token family is replaced, prefix included; a carrier
// (`NAME=value`, `"x-api-key": "..."`, `Authorization: Bearer ...`) keeps the name and drops the value.
// The order matters: families run before carriers, so `API_KEY=sk-...` is one replacement, and no
// value class admits `*`, so an already redacted value is never matched again.

export const REDACTED = "***REDACTED***";

/** What a rule detects, in upstream's words (they name the rules, nothing more). */
export type SecretCategory =
  | "API key"
  | "bearer token"
  | "private key block"
  | "URL credential"
  | "credential-bearing field value";

export interface SecretPattern {
  name: string;
  /** Global: every match in a text is replaced. */
  pattern: RegExp;
  /** A replacement string: `$1` keeps the carrier's name and separator. */
  replacement: string;
  category: SecretCategory;
  /**
   * A quick test every match passes (the literal the rule cannot match without): a text that fails
   * it is skipped. The carriers have no literal prefix, and trying them at every offset is most of
   * the cost on long rows.
   */
  needs?: RegExp;
}

// A quote as it appears in raw text, Python reprs and JSON escaped up to eight times (`\"k\": \"v\"`):
// optional backslashes then a quote, or nothing.
const Q = String.raw`(?:\\{0,8}["']|)`;
// A carrier's value: stops at quotes, a backslash, whitespace, `,` `}` `&` (so it never swallows the
// next JSON field or query parameter) and at `*` (so the marker is not re-matched).
const VALUE = String.raw`[^"'\s,}\\*&]+`;
// A variable-name prefix, capped so a long alphanumeric run cannot make a match quadratic.
const NAME = "[A-Za-z0-9_]{0,64}";

const family = (name: string, source: string, category: SecretCategory = "API key"): SecretPattern => ({
  name,
  pattern: new RegExp(source, "g"),
  replacement: REDACTED,
  category,
});

const carrier = (name: string, source: string, category: SecretCategory, needs?: RegExp): SecretPattern => ({
  name,
  pattern: new RegExp(source, "gi"),
  replacement: `$1${REDACTED}`,
  category,
  ...(needs ? { needs } : {}),
});

export const SECRET_PATTERNS: readonly SecretPattern[] = [
  // PEM blocks first: the carriers stop at the first space and would leave the key body.
  family(
    "pem-private-key",
    String.raw`-----BEGIN [A-Z0-9 ]{0,40}PRIVATE KEY-----[\s\S]{0,8192}?-----END [A-Z0-9 ]{0,40}PRIVATE KEY-----`,
    "private key block",
  ),
  // Unlike upstream's, a key starts a word: `<task-notification>` in Claude Code's tool descriptions
  // is no `sk-` key (docs/known-pitfalls.md).
  family("anthropic", "(?<![A-Za-z0-9])sk-ant-[a-zA-Z0-9_-]{12,}"),
  // Labels no ordinary slug carries, so hyphens are safe in the body.
  family(
    "sk-benchflow-svcacct-openrouter",
    "(?<![A-Za-z0-9])sk-(?:benchflow|svcacct|or-v1)-[A-Za-z0-9_-]{12,}",
  ),
  // `proj`/`admin` are common words: a real key has an uppercase letter, a kebab slug does not.
  family(
    "openai-proj-admin",
    "(?<![A-Za-z0-9])sk-(?:proj|admin)-(?=[A-Za-z0-9_-]{0,200}[A-Z])[A-Za-z0-9_-]{12,}",
  ),
  // Alphanumeric only, so `task-sk-us-east-1-...` survives.
  family("openai", "(?<![A-Za-z0-9])sk-[a-zA-Z0-9]{12,}"),
  family("google", "AIzaSy[A-Za-z0-9_-]{20,}"),
  // Exactly 16 after the prefix, so ASIAPACIFIC is a word.
  family("aws-access-key", "(?:AKIA|ASIA)[A-Z0-9]{16}(?![A-Z0-9])"),
  family("daytona", "dtn_[A-Za-z0-9_]{16,}"),
  family("github", "(?:ghp|gho|ghu|ghs|ghr)_[A-Za-z0-9]{20,}"),
  family("github-fine-grained", "github_pat_[A-Za-z0-9_]{20,}"),
  family("slack", "xox[baprs]-[A-Za-z0-9-]{10,}"),
  family("groq", "gsk_[A-Za-z0-9]{20,}"),
  family("xai", "xai-[A-Za-z0-9]{20,}"),
  family("replicate", "r8_[A-Za-z0-9]{20,}"),
  family("huggingface", "hf_[A-Za-z0-9]{20,}"),
  family("fireworks", "fw_[A-Za-z0-9]{20,}"),
  // Three base64url segments after a JWT header; a signature under 20 characters is not one.
  family(
    "jwt",
    "(?<![A-Za-z0-9_-])eyJ[A-Za-z0-9_-]{10,512}\\.[A-Za-z0-9_-]{6,512}\\.[A-Za-z0-9_-]{20,512}",
    "bearer token",
  ),
  // user:password@ in URLs of the schemes that carry credentials; scheme and host are kept.
  {
    name: "url-userinfo",
    pattern: new RegExp(
      "((?:https?|ftp|ftps|postgres|postgresql|mysql|mongodb(?:\\+srv)?|redis|rediss|amqp|amqps)://)" +
        "[^\\s/?#:@]{0,256}:[^\\s/?#]{0,256}@",
      "g",
    ),
    replacement: `$1${REDACTED}@`,
    category: "URL credential",
    needs: /:\/\//,
  },
  // Query parameters with secret names only (not `key`, `token`, `auth`, `sig`, `pwd`).
  carrier(
    "url-query-secret",
    "([?&](?:api_?key|access_key|access_token|refresh_token|session_token|session_id|sessionid|" +
      "client_secret|aws_secret_access_key|account_key|secret|password_hash|password|passwd|" +
      "signature|x-amz-signature|x-amz-credential|x-amz-security-token|sas)=)[^&\\s\"'*]+",
    "URL credential",
    /[?&]/,
  ),
  // `?sig=v2` is a version flag; an Azure SAS signature is long.
  carrier("url-sas-signature", "([?&]sig=)[^&\\s\"'*]{16,}", "URL credential", /[?&]sig=/i),
  carrier(
    "api-key-header",
    `((?:${Q}(?:x-api-key|x-goog-api-key|api-key)${Q})\\s*[:=]\\s*${Q})${VALUE}`,
    "API key",
    /api-key/i,
  ),
  // No left boundary: GEMINI_API_KEY=... and "openai_api_key" are carriers too.
  carrier("api-key-name", `(${Q}api_key${Q}\\s*[:=]\\s*${Q})${VALUE}`, "API key", /api_key/i),
  carrier(
    "master-private-key",
    `(${Q}(?:master|private)[_-]key${Q}\\s*[:=]\\s*${Q})${VALUE}`,
    "credential-bearing field value",
    /(?:master|private)[_-]key/i,
  ),
  // BEARER_TOKEN anywhere in the name (AWS_BEARER_TOKEN_BEDROCK).
  carrier(
    "bearer-token-name",
    `(?<![A-Za-z0-9])(${Q}${NAME}BEARER_TOKEN${NAME}${Q}\\s*[:=]\\s*${Q})${VALUE}`,
    "bearer token",
    /bearer_token/i,
  ),
  // Names ending in a secret word; `primary_key`, TOKENIZER_PATH and SECRETARY are not.
  carrier(
    "secret-name-suffix",
    `(?<![A-Za-z0-9])(${Q}${NAME}` +
      "(?:TOKEN|SECRET|PASSWORD|PASSWD|ACCESS_KEY|SECRET_KEY|ACCOUNT_KEY|PRIVATE_KEY|ENCRYPTION_KEY|CREDENTIALS?)" +
      `${Q}\\s*[:=]\\s*${Q})${VALUE}`,
    "credential-bearing field value",
    /(?:token|secret|password|passwd|_key|credentials?)(?:\\{0,8}["']|)\s*[:=]/i,
  ),
  // An Authorization value with its scheme: the scheme stays.
  carrier(
    "authorization-scheme",
    `(?<![A-Za-z0-9_-])(${Q}authorization${Q}\\s*[:=]\\s*${Q}(?:Bearer|Token|Basic|ApiKey)\\s+)${VALUE}`,
    "bearer token",
    /authorization/i,
  ),
  // A bare Authorization value; not a scheme (done above) and not a Python string prefix (f'...').
  carrier(
    "authorization-bare",
    `(?<![A-Za-z0-9_-])(${Q}authorization${Q}\\s*[:=]\\s*${Q})(?!(?:Bearer|Token|Basic|ApiKey)\\b|[rRuUbBfF]{1,3}["'])${VALUE}`,
    "bearer token",
    /authorization/i,
  ),
];

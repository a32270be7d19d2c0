// Recorded headers never carry a credential: by name (authorization, x-api-key, cookies, ...) or by
// shape (a value that looks like a key), whatever the header is called.
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from "node:http";

const SECRET_NAME = /authorization|api[-_]?key|cookie|token|secret|password|session|credential/i;
const SECRET_VALUE = /^(bearer\s|basic\s)|^(sk|bf|pk|rk)-[\w-]{8,}|^[A-Za-z0-9_-]{32,}$/i;

export function redactHeaders(headers: IncomingHttpHeaders | OutgoingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name in headers) {
    const raw = headers[name];
    if (raw === undefined) continue;
    const value = typeof raw === "string" ? raw : Array.isArray(raw) ? raw.join(", ") : String(raw);
    out[name] = SECRET_NAME.test(name) || SECRET_VALUE.test(value.trim()) ? "[redacted]" : value;
  }
  return out;
}

const fixed = new WeakMap<object, Record<string, string>>();

/** redactHeaders for a header object the gateway reuses unchanged (its own response headers). */
export function redactFixedHeaders(headers: OutgoingHttpHeaders): Record<string, string> {
  let out = fixed.get(headers);
  if (!out) {
    out = redactHeaders(headers);
    fixed.set(headers, out);
  }
  return out;
}

/** The credential an agent presented (Bearer, x-api-key or x-goog-api-key), or null. */
export function credentialOf(headers: IncomingHttpHeaders): string | null {
  const auth = headers.authorization;
  if (typeof auth === "string" && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, "").trim();
  // x-goog-api-key: Google's SDKs (Gemini CLI) send the key there.
  const key = headers["x-api-key"] ?? headers["api-key"] ?? headers["x-goog-api-key"];
  if (typeof key === "string" && key !== "") return key.trim();
  return null;
}

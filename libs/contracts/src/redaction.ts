// One set of redaction rules for every place a secret could be kept or shown: the gateway applies
// them before listeners see a failure, tools before they store text, both audit sinks before disk.
// Pure string functions, so contracts still imports nothing.

/** What a redacted secret is replaced with. */
export const REDACTED = '[REDACTED]';

/**
 * Key names whose value is a secret when written as `key=value`, `key: value` or `"key":"value"`.
 * Matched case-insensitively as the last word of a name (`AWS_SECRET_ACCESS_KEY`, `db_password`,
 * `Proxy-Authorization`), so `max_tokens` or "token budget" are left alone.
 */
const SECRET_KEYS =
  'passwords?|passwd|secret|client[_-]?secret|api[_-]?keys?|apikey|x-api-key|access[_-]?key(?:[_-]?id)?|' +
  'secret[_-]?access[_-]?key|private[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|id[_-]?token|' +
  'session[_-]?token|token|bearer|authorization|credentials?|cookie|set-cookie';

interface Rule {
  readonly pattern: RegExp;
  readonly replace: (match: string, ...groups: string[]) => string;
}

/**
 * Order matters: whole-token shapes first (PEM blocks, JWTs, vendor prefixes), then schemes
 * (`Bearer x`), then `key=value` pairs, so the most specific rule names what it removed.
 */
const RULES: readonly Rule[] = [
  // PEM private keys, including a block cut off before its END line.
  {
    pattern: /-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z0-9 ]*PRIVATE KEY-----|$)/g,
    replace: () => REDACTED,
  },
  // JSON Web Tokens (header.payload.signature, base64url).
  { pattern: /\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*/g, replace: () => REDACTED },
  // Vendor API keys with recognisable prefixes: OpenAI/Anthropic `sk-`, Stripe, GitHub, GitLab,
  // Slack, AWS access key ids, Google API keys, npm tokens.
  {
    pattern:
      /\b(?:sk|pk|rk)-(?:[A-Za-z0-9]+-)*[A-Za-z0-9_]{8,}|\b(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{8,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bglpat-[A-Za-z0-9_-]{16,}|\bxox[abposr]-[A-Za-z0-9-]{8,}|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b|\bAIza[0-9A-Za-z_-]{30,}|\bnpm_[A-Za-z0-9]{30,}/g,
    replace: () => REDACTED,
  },
  // `Bearer <token>` anywhere (other schemes, like `Basic`, are common words: they are caught
  // below only after an `Authorization:` key).
  {
    pattern: /\b(Bearer)(\s+)[A-Za-z0-9._~+/=-]+/gi,
    replace: (_m, scheme, space) => `${scheme}${space}${REDACTED}`,
  },
  // Credentials in URLs: scheme://user:password@host keeps the user; a lone userinfo
  // (`https://<token>@github.com`) is itself the secret.
  {
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/)(?:([^\s:/@?#]*:)[^\s@/?#]*|[^\s:/@?#]+)@/gi,
    replace: (_m, scheme, user) => `${scheme}${user ?? ''}${REDACTED}@`,
  },
  // key=value, key: value, "key": "value", key='value' (quotes kept, value removed; an escaped
  // quote inside a JSON string does not end it). A name may carry a prefix (`GITHUB_TOKEN`).
  {
    pattern: new RegExp(
      `(^|[^A-Za-z0-9_-])(["']?)((?:[A-Za-z0-9]+[_-])*(?:${SECRET_KEYS}))\\2(\\s*[:=]\\s*)(?:"((?:[^"\\\\]|\\\\.)*)"|'([^']*)'|((?:(?:Bearer|Basic|Token|Digest)\\s+)?(?:\\[REDACTED\\]|[^\\s,;&}\\]"']+)))`,
      'gi',
    ),
    replace: (match, lead, quote, key, sep, dq, sq, bare) => {
      const value = dq ?? sq ?? bare ?? '';
      // Nothing to hide, or already hidden by a rule above (`Authorization: Bearer [REDACTED]`).
      if (value.length === 0 || value.endsWith(REDACTED)) return match;
      const hidden = dq !== undefined ? `"${REDACTED}"` : sq !== undefined ? `'${REDACTED}'` : REDACTED;
      return `${lead}${quote}${key}${quote}${sep}${hidden}`;
    },
  },
];

/**
 * Something every rule above needs to find: without one of these, no rule can match, and the
 * common case (`acme`, `web_search`, `1.2.0`, a call id) skips the rules entirely.
 */
const MIGHT_HOLD_SECRET = new RegExp(
  `-----BEGIN|eyJ|bearer|\\b(?:sk|pk|rk)[-_]|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|AKIA|ASIA|AIza|npm_|://|(?:${SECRET_KEYS})["']?\\s*[:=]`,
  'i',
);

/**
 * Replaces everything in `text` that looks like a secret (bearer tokens, API keys, passwords,
 * private keys, URL credentials) with `[REDACTED]`. Applied by the audit sinks to every string
 * field of every event, so a secret that leaks into a reason or a repair note never reaches disk,
 * and by the gateway to failure text before any listener (such as the shared memory) sees it.
 * Idempotent, and linear in the length of `text`.
 */
export function redactSecrets(text: string): string {
  if (!MIGHT_HOLD_SECRET.test(text)) return text;
  let out = text;
  for (const rule of RULES) out = out.replace(rule.pattern, rule.replace as (substring: string, ...args: unknown[]) => string);
  return out;
}

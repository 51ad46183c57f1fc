// One set of redaction rules for every place a secret could be kept or shown: the gateway applies
// them before listeners see a failure, tools before they store text, both audit sinks before disk.
// Pure string functions, so contracts still imports nothing.

/** What a redacted secret is replaced with. */
export const REDACTED = '[REDACTED]';

/**
 * Key names whose value is a secret when written as `key=value`, `key: value` or `"key":"value"`.
 * Matched case-insensitively as the last word of a name (`AWS_SECRET_ACCESS_KEY`, `db_password`,
 * `DB_PASS`, `MYSQL_PWD`, `Proxy-Authorization`), so `max_tokens` or "token budget" are left alone.
 */
const SECRET_KEYS =
  'passwords?|passwd|pass|pwd|secret|client[_-]?secret|api[_-]?keys?|apikey|x-api-key|access[_-]?key(?:[_-]?id)?|' +
  'secret[_-]?access[_-]?key|private[_-]?key|auth[_-]?token|access[_-]?token|refresh[_-]?token|id[_-]?token|' +
  'session[_-]?token|token|bearer|authorization|credentials?|cookie|set-cookie';
/**
 * Key names also recognised glued to a prefix without a separator (`PGPASSWORD`, `dbpasswd`,
 * `csrftoken`, `MYAPIKEY`). Short ones (`pass`, `pwd`) are not: glued, they end ordinary words
 * (`bypass`, `compass`).
 */
const GLUED_KEYS = 'passwords?|passwd|secret|token|api[_-]?keys?';
/** A separator between key and value: `=` or `:`, also URL-encoded (`%3D`, `%3A`). */
const SEPARATOR = '(?:[:=]|%3[ad])';
/** A quote around a key: `"`, `'`, or a URL-encoded `"` (`%22`). */
const QUOTE = `(?:["']|%22)`;

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
  // `Bearer <token>` anywhere.
  {
    pattern: /\b(Bearer)(\s+)[A-Za-z0-9._~+/=-]+/gi,
    replace: (_m, scheme, space) => `${scheme}${space}${REDACTED}`,
  },
  // An AWS secret access key written after its name without `=` or `:` (`aws_secret_access_key
  // wJalr…`, as in `aws configure` output): the 40-character shape after that name only, since
  // the shape alone is also a SHA-1 in base64 or a word list.
  {
    // Starts only after a character that cannot be in a name, as below: a `\b` start would rescan
    // the rest of `-a-a-a…` from every letter.
    pattern: /(^|[^A-Za-z0-9_-])((?:[A-Za-z0-9]+[_-])*secret[_-]?access[_-]?key)(["'\s]{1,8})([A-Za-z0-9/+]{40})(?![A-Za-z0-9/+])/gi,
    replace: (_m, lead, key, space) => `${lead}${key}${space}${REDACTED}`,
  },
  // Credentials in URLs: scheme://user:password@host keeps the user; a lone userinfo
  // (`https://<token>@github.com`) is itself the secret.
  {
    pattern: /\b([a-z][a-z0-9+.-]*:\/\/)(?:([^\s:/@?#]*:)[^\s@/?#]*|[^\s:/@?#]+)@/gi,
    replace: (_m, scheme, user) => `${scheme}${user ?? ''}${REDACTED}@`,
  },
  // key=value, key: value, "key": "value", key='value' (quotes kept, value removed; an escaped
  // quote inside a JSON string does not end it), also URL-encoded (`password%3Dx`,
  // `%22token%22%3A%22x%22`). A name may carry a prefix (`GITHUB_TOKEN`, `PGPASSWORD`). Each
  // prefix word ends at its `_`/`-` and the glued part cannot cross one, so no input backtracks.
  {
    pattern: new RegExp(
      `(^|[^A-Za-z0-9_-])(${QUOTE}?)((?:[A-Za-z0-9]+[_-])*(?:[A-Za-z0-9]*(?:${GLUED_KEYS})|${SECRET_KEYS}))\\2(\\s*${SEPARATOR}\\s*)(?:"((?:[^"\\\\]|\\\\.)*)"|'([^']*)'|((?:(?:Bearer|Basic|Token|Digest)\\s+)?(?:\\[REDACTED\\]|[^\\s,;&}\\]"']+)))`,
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
  // `Basic <base64 of user:password>` anywhere, last so that an `Authorization: Basic …` pair is
  // hidden whole by the rule above. "Basic" is a common word, so the word after it counts only
  // when it decodes to printable text with a colon: `Basic usage` stays.
  {
    pattern: /\b(Basic)(\s+)([A-Za-z0-9+/]{4,}={0,2})(?![A-Za-z0-9+/=])/gi,
    replace: (match, scheme, space, value) => (isBasicCredential(value) ? `${scheme}${space}${REDACTED}` : match),
  },
];

/**
 * Something every rule above needs to find: without one of these, no rule can match, and the
 * common case (`acme`, `web_search`, `1.2.0`, a call id) skips the rules entirely.
 */
const MIGHT_HOLD_SECRET = new RegExp(
  `-----BEGIN|eyJ|bearer|basic\\s|access[_-]?key|\\b(?:sk|pk|rk)[-_]|gh[pousr]_|github_pat_|glpat-|xox[abposr]-|AKIA|ASIA|AIza|npm_|://|(?:${SECRET_KEYS})${QUOTE}?\\s*${SEPARATOR}`,
  'i',
);

const BASE64 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';

/**
 * Whether `value` is base64 of `user:password`: a length a multiple of four, decoding to printable
 * ASCII with a colon. Decoded here by hand, since contracts may use no runtime's Buffer or atob.
 */
function isBasicCredential(value: string): boolean {
  if (value.length % 4 !== 0) return false;
  const digits = value.replace(/=+$/, '');
  let bits = 0;
  let buffer = 0;
  let colon = false;
  for (const char of digits) {
    const index = BASE64.indexOf(char);
    if (index < 0) return false;
    buffer = (buffer << 6) | index;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      const byte = (buffer >> bits) & 0xff;
      if (byte < 0x20 || byte > 0x7e) return false;
      if (byte === 0x3a) colon = true;
    }
  }
  return colon;
}

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

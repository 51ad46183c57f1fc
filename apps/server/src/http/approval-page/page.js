/* global document, window, fetch */
// The approval page's script (ADR 0052). It renders what the API says with textContent only: an
// approval's arguments, reason and names are the agent's words and must never become markup.
// The token lives in this closure only: never in the URL, storage or a cookie.
(function approvalPage() {
  'use strict';

  const MAX_ID_LENGTH = 128;
  /**
   * Characters that do not show as themselves, as the server's `hidden` counts them: controls,
   * format (bidi, zero-width, tags), line and paragraph separators, spaces other than U+0020,
   * private use, unassigned and lone surrogates.
   */
  const INVISIBLE_CATEGORY = /^[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Zs}\p{Co}\p{Cn}\p{Cs}]$/u;
  /** Blank letters and joiners that render as nothing (fillers, braille blank, grapheme joiner, Khmer vowels, variation selectors). */
  const BLANK = [[0x115f, 0x1160], [0x3164, 0x3164], [0xffa0, 0xffa0], [0x2800, 0x2800], [0x034f, 0x034f], [0x17b4, 0x17b5], [0x180b, 0x180f], [0xfe00, 0xfe0f], [0xe0100, 0xe01ef]];
  const invisible = (char, code) => char !== ' ' && (INVISIBLE_CATEGORY.test(char) || BLANK.some(([low, high]) => code >= low && code <= high));

  const byId = (id) => document.getElementById(id);
  const el = {
    signIn: byId('sign-in'),
    token: byId('token'),
    status: byId('status'),
    problem: byId('problem'),
    request: byId('request'),
    decide: byId('decide'),
    reason: byId('reason'),
    approve: byId('approve'),
    deny: byId('deny'),
  };

  let token = '';
  let busy = false;

  /** Every string from the API is shown with its invisible characters written out, as the server's argsDisplay does. */
  function visible(value, keepNewlines) {
    let shown = '';
    for (const char of String(value)) {
      const code = char.codePointAt(0);
      shown += invisible(char, code) && !(keepNewlines && char === '\n') ? `\\u{${code.toString(16).toUpperCase().padStart(4, '0')}}` : char;
    }
    return shown;
  }

  function setText(id, value) {
    byId(id).textContent = visible(value === undefined || value === null ? '' : value);
  }

  function say(message) {
    el.status.textContent = visible(message);
    el.problem.textContent = '';
  }

  function complain(message) {
    el.problem.textContent = visible(message);
    el.status.textContent = '';
  }

  /** The approval id is the page's last path segment; the page holds no data of its own. */
  function approvalId() {
    const segments = window.location.pathname.split('/');
    const raw = segments[segments.length - 1] || '';
    let id;
    try {
      id = decodeURIComponent(raw);
    } catch {
      return undefined;
    }
    return id.length > 0 && id.length <= MAX_ID_LENGTH ? id : undefined;
  }

  /** The API beside this page, relative so that a path prefix of a reverse proxy is kept. */
  function apiUrl(id, suffix) {
    return new URL(`../api/v1/approvals/${encodeURIComponent(id)}${suffix}`, window.location.href).href;
  }

  async function api(url, init) {
    const headers = { authorization: `Bearer ${token}`, accept: 'application/json' };
    if (init && init.body !== undefined) headers['content-type'] = 'application/json';
    let response;
    try {
      // Same origin, no cookies, no cache, no redirects: the bearer header is the only credential.
      response = await fetch(url, { ...init, headers, credentials: 'omit', cache: 'no-store', redirect: 'error', referrerPolicy: 'no-referrer' });
    } catch {
      return { ok: false, message: 'The server could not be reached; try again.' };
    }
    let body;
    try {
      body = await response.json();
    } catch {
      body = undefined;
    }
    if (response.ok) return { ok: true, body };
    if (response.status === 401) return { ok: false, status: 401, message: 'The server refused this token. Check it and try again.' };
    const message = body && body.error && typeof body.error.message === 'string' ? body.error.message : `The server answered ${response.status}.`;
    return { ok: false, status: response.status, message };
  }

  function when(ms) {
    if (typeof ms !== 'number' || !Number.isFinite(ms)) return '';
    return new Date(ms).toISOString();
  }

  function render(view) {
    setText('field-id', view.id);
    setText('field-tool', view.tool);
    setText('field-version', view.version);
    setText('field-requester', view.requester);
    setText('field-tenant', view.tenant);
    setText('field-status', view.status);
    setText('field-created', when(view.createdAt));
    const expired = typeof view.expiresAt === 'number' && view.expiresAt <= Date.now();
    setText('field-expires', `${when(view.expiresAt)}${expired ? ' (expired)' : ''}`);
    setText('field-digest', view.payloadDigest);

    const decided = view.status !== 'pending';
    byId('decision-label').hidden = !decided;
    byId('field-decision').hidden = !decided;
    if (decided) {
      const parts = [view.status];
      if (view.decidedBy) parts.push(`by ${view.decidedBy}`);
      if (view.selfApproved) parts.push('(self-approved)');
      if (view.reason) parts.push(`reason: ${view.reason}`);
      setText('field-decision', parts.join(' '));
    }

    const hidden = Array.isArray(view.hidden) ? view.hidden : [];
    byId('hidden-section').hidden = hidden.length === 0;
    const hiddenList = byId('hidden-list');
    hiddenList.replaceChildren();
    for (const line of hidden) {
      const item = document.createElement('li');
      item.textContent = visible(line);
      hiddenList.append(item);
    }
    // The exact arguments as JSON (which escapes controls and backslashes), with every character that
    // does not show as itself written out as \u{XXXX}: a literal backslash in the args reads as \\.
    // The newlines kept are JSON's own layout; those inside strings are already escaped as \n.
    byId('field-args').textContent = visible(JSON.stringify(view.args, null, 2), true);

    const files = Array.isArray(view.namedFiles) ? view.namedFiles : [];
    byId('files-section').hidden = files.length === 0;
    const filesList = byId('files-list');
    filesList.replaceChildren();
    for (const file of files) {
      const item = document.createElement('li');
      item.textContent = visible(`${file.path}: ${file.sha256 !== undefined ? `${file.sha256} (${file.bytes} bytes)` : file.note !== undefined ? file.note : 'no digest'}`);
      filesList.append(item);
    }
    setText('field-note', view.note);

    const open = view.status === 'pending' && !expired;
    el.decide.hidden = !open;
    el.request.hidden = false;
  }

  async function load(id) {
    say('Reading the request…');
    const answer = await api(apiUrl(id, ''));
    if (!answer.ok) {
      el.request.hidden = true;
      complain(answer.message);
      return false;
    }
    render(answer.body);
    say(answer.body.status === 'pending' ? 'Read the request, then approve or deny it.' : `This request is ${answer.body.status}.`);
    return true;
  }

  async function decide(id, approve) {
    if (busy) return;
    busy = true;
    el.approve.disabled = true;
    el.deny.disabled = true;
    try {
      const reason = el.reason.value;
      const answer = await api(apiUrl(id, '/decide'), { method: 'POST', body: JSON.stringify(reason === '' ? { approve } : { approve, reason }) });
      if (!answer.ok) {
        complain(answer.message);
        return;
      }
      render(answer.body);
      say(`Done: the request is ${answer.body.status}.`);
    } finally {
      busy = false;
      el.approve.disabled = false;
      el.deny.disabled = false;
    }
  }

  function start() {
    const id = approvalId();
    if (id === undefined) {
      el.signIn.hidden = true;
      complain(`This address names no approval (an id is 1 to ${MAX_ID_LENGTH} characters).`);
      return;
    }
    el.signIn.addEventListener('submit', (event) => {
      event.preventDefault();
      const typed = el.token.value.trim();
      if (typed === '') {
        complain('Enter your approver token.');
        el.token.focus();
        return;
      }
      token = typed;
      // Out of the DOM once read: the closure is the only place the token stays.
      el.token.value = '';
      void load(id);
    });
    el.approve.addEventListener('click', () => void decide(id, true));
    el.deny.addEventListener('click', () => void decide(id, false));
  }

  start();
})();

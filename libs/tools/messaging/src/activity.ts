import type { BusMessage } from '@toolgate/contracts';

/** The ActivityStreams 2.0 context every envelope names. */
export const AS2_CONTEXT = 'https://www.w3.org/ns/activitystreams';

/**
 * Principals as IRIs, shared with the knowledge graph's roster (`team:<principal>` there), so a
 * message's actor and a roster entry name the same resource.
 */
export const TEAM_IRI_PREFIX = 'urn:toolgate:team:';

export function teamIri(principal: string): string {
  return TEAM_IRI_PREFIX + encodeURIComponent(principal);
}

/** The envelope `send_message` puts on the bus. */
export interface Activity {
  readonly '@context': typeof AS2_CONTEXT;
  /** `Offer` (a task offered) on `task` and `task:<principal>`, `Announce` elsewhere. */
  readonly type: 'Offer' | 'Announce';
  /** `urn:uuid:<uuid>`: also the bus message id. */
  readonly id: string;
  /** The sending principal as a team IRI. */
  readonly actor: string;
  /** The message text as the agent wrote it. */
  readonly summary: string;
  /** ISO-8601 time of sending. */
  readonly published: string;
  /** Team IRIs of the addressees; absent means everyone in the tenant. */
  readonly to?: readonly string[];
}

/** Leading `@principal` mentions of a message: who a `control` message is addressed to. */
export function leadingMentions(text: string): string[] {
  const mentions: string[] = [];
  const pattern = /^\s*@([A-Za-z0-9][A-Za-z0-9_.-]{0,63})(?=[\s,:;]|$)[,:;]?/;
  let rest = text;
  for (let match = pattern.exec(rest); match; match = pattern.exec(rest)) {
    mentions.push(match[1]!);
    rest = rest.slice(match[0].length);
  }
  return mentions;
}

/** How one bus message reads to one principal; `undefined` when it is not meant for them. */
export function render(message: BusMessage, reader: string): { readonly actor: string; readonly text: string } | undefined {
  const activity = asActivity(message.body);
  if (!activity) {
    // Not AS2: passed through as text, under the authenticated sender's name.
    if (message.channel === 'control' && !addressedTo(leadingMentions(message.body).map(teamIri), reader)) return undefined;
    return { actor: message.sender, text: message.body };
  }
  if (message.channel === 'control' && !addressedTo(activity.to, reader)) return undefined;
  return { actor: activity.actor, text: activity.summary };
}

/** The AS2 "everyone" collection, in its three spellings. */
const PUBLIC = new Set([`${AS2_CONTEXT}#Public`, 'as:Public', 'Public']);

/** An addressee list lets everyone read when it is empty or public, else only those it names. */
function addressedTo(to: readonly string[], reader: string): boolean {
  return to.length === 0 || to.includes(teamIri(reader)) || to.some((iri) => PUBLIC.has(iri));
}

interface ParsedActivity {
  readonly actor: string;
  readonly summary: string;
  readonly to: readonly string[];
}

/**
 * Reads an AS2 document leniently (other publishers may put AS2 on the bus too): a JSON object
 * naming the AS2 context and a string `type`. Anything else is not AS2.
 */
function asActivity(body: string): ParsedActivity | undefined {
  if (!body.startsWith('{')) return undefined;
  let doc: unknown;
  try {
    doc = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (!isObject(doc) || typeof doc['type'] !== 'string') return undefined;
  const context = doc['@context'];
  const contexts = Array.isArray(context) ? context : [context];
  if (!contexts.some((c) => c === AS2_CONTEXT || c === `${AS2_CONTEXT}#` || c === 'as:')) return undefined;

  const text = [doc['summary'], doc['content'], doc['name']].find((v): v is string => typeof v === 'string');
  const object = doc['object'];
  const objectText = isObject(object) ? [object['summary'], object['content'], object['name']].find((v) => typeof v === 'string') : undefined;
  return {
    actor: displayName(doc['actor']) ?? 'someone',
    summary: text ?? (typeof objectText === 'string' ? objectText : `(${doc['type']})`),
    to: iris(doc['to']),
  };
}

/** A team IRI shows as the principal id; an AS2 actor object as its name or id. */
function displayName(actor: unknown): string | undefined {
  if (typeof actor === 'string') {
    if (!actor.startsWith(TEAM_IRI_PREFIX)) return actor;
    try {
      return decodeURIComponent(actor.slice(TEAM_IRI_PREFIX.length));
    } catch {
      return actor;
    }
  }
  if (isObject(actor)) return displayName(actor['name']) ?? displayName(actor['id']);
  return undefined;
}

function iris(value: unknown): string[] {
  const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
  return list.map((v) => (isObject(v) ? v['id'] : v)).filter((v): v is string => typeof v === 'string');
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

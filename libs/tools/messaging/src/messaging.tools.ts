import { randomUUID } from 'node:crypto';
import {
  ToolError,
  type Clock,
  type JsonObject,
  type MessageBus,
  type PrincipalDirectory,
  type ToolContext,
  type ToolDefinition,
  type ToolManifest,
} from '@toolgate/contracts';
import { AS2_CONTEXT, leadingMentions, render, teamIri, type Activity } from './activity.js';
import { BROADCAST_CHANNELS, parseChannel, shown, type Channel } from './channels.js';

/** Longest message accepted, in characters: a note or a task, not a document (share files for those). */
export const MAX_MESSAGE_CHARS = 4000;
/** Messages returned per `read_messages` call: default and upper bound. */
export const DEFAULT_READ_LIMIT = 20;
export const MAX_READ_LIMIT = 50;
/** Bus reads one `read_messages` call may make while skipping control messages meant for others. */
const MAX_READ_ROUNDS = 50;

export interface MessagingToolDeps {
  readonly bus: MessageBus;
  readonly clock: Clock;
  /** Id of each message (default: a random UUID). */
  readonly newId?: () => string;
  /**
   * When given, `task:<principal>` and `@principal` mentions must name a principal of the
   * sender's tenant, so a typo is an error instead of a message nobody will read.
   */
  readonly directory?: PrincipalDirectory;
}

const channelDescription =
  "One of 'log' (progress notes), 'task' (work offered to anyone), 'review' (requests for review), 'control' " +
  "(start/stop instructions; begin with '@<principal>' to address someone), or 'task:<principal>' (that principal's task inbox).";

export const sendMessageManifest: ToolManifest = {
  name: 'send_message',
  version: '1.0.0',
  description:
    "Posts a plain-text message to a channel your team reads. Hand a task to one principal with channel 'task:<principal>'; " +
    "address a 'control' message by starting it with '@<principal>'.",
  provenance: 'first-party',
  risk: 'low',
  permissions: [{ type: 'messaging', scope: 'send' }],
  input: {
    type: 'object',
    properties: {
      channel: { type: 'string', minLength: 1, maxLength: 80, description: channelDescription },
      message: { type: 'string', minLength: 1, maxLength: MAX_MESSAGE_CHARS, description: 'The text to send.' },
    },
    required: ['channel', 'message'],
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: {
      id: { type: 'string' },
      channel: { type: 'string' },
      type: { enum: ['Offer', 'Announce'] },
      published: { type: 'string' },
      to: { type: 'array', items: { type: 'string' } },
    },
    required: ['id', 'channel', 'type', 'published'],
    additionalProperties: false,
  },
  tier: 'inprocess',
  timeoutMs: 5000,
};

export const readMessagesManifest: ToolManifest = {
  name: 'read_messages',
  version: '1.0.0',
  description:
    "Returns messages you have not read yet, oldest first, as 'sender: text' lines. Without a channel it reads log, task, review, " +
    "control and your own task inbox, each line prefixed with '[channel]'. Each message is returned to you once.",
  provenance: 'first-party',
  risk: 'low',
  permissions: [{ type: 'messaging', scope: 'read' }],
  input: {
    type: 'object',
    properties: {
      channel: { type: 'string', minLength: 1, maxLength: 80, description: `Read only this channel. ${channelDescription}` },
      limit: {
        type: 'integer',
        minimum: 1,
        maximum: MAX_READ_LIMIT,
        description: `Most messages to return (default ${DEFAULT_READ_LIMIT}).`,
      },
    },
    additionalProperties: false,
  },
  output: {
    type: 'object',
    properties: {
      messages: { type: 'array', items: { type: 'string' } },
      more: { type: 'boolean', description: 'True when the limit was reached: call again for the rest.' },
    },
    required: ['messages', 'more'],
    additionalProperties: false,
  },
  tier: 'inprocess',
  timeoutMs: 5000,
};

/**
 * `send_message` and `read_messages`: agents exchange plain text; on the bus every message is
 * an ActivityStreams 2.0 activity (`Offer` on task channels, `Announce` elsewhere). The sender
 * and the tenant always come from the authenticated principal, never from the arguments.
 */
export function createMessagingTools(deps: MessagingToolDeps): ToolDefinition[] {
  const newId = deps.newId ?? randomUUID;

  const send = async (args: JsonObject, ctx: ToolContext) => {
    const { principal } = ctx;
    const channel = parseChannel(args['channel']);
    const text = messageText(args['message']);

    const addressees = channel.kind === 'inbox' ? [channel.owner] : channel.name === 'control' ? leadingMentions(text) : [];
    if (deps.directory) {
      for (const who of addressees) {
        if (!deps.directory.get(principal.tenant, who)) {
          throw new ToolError(`there is no principal '${shown(who)}' in your team`, 'UNKNOWN_PRINCIPAL');
        }
      }
    }
    const now = deps.clock.now();
    const published = new Date(now).toISOString();
    const id = `urn:uuid:${newId()}`;
    const activity: Activity = {
      '@context': AS2_CONTEXT,
      type: isTaskChannel(channel) ? 'Offer' : 'Announce',
      id,
      actor: teamIri(principal.id),
      summary: text,
      published,
      ...(addressees.length > 0 ? { to: [...new Set(addressees)].map(teamIri) } : {}),
    };
    await deps.bus.publish({
      id,
      tenant: principal.tenant,
      channel: channel.name,
      sender: principal.id,
      body: JSON.stringify(activity),
      publishedAt: now,
    });
    return {
      id,
      channel: channel.name,
      type: activity.type,
      published,
      ...(addressees.length > 0 ? { to: [...new Set(addressees)] } : {}),
    };
  };

  const read = async (args: JsonObject, ctx: ToolContext) => {
    const { principal } = ctx;
    const limit = readLimit(args['limit']);
    let channels: string[];
    if (args['channel'] === undefined) {
      channels = [...BROADCAST_CHANNELS, `task:${principal.id}`];
    } else {
      const channel = parseChannel(args['channel']);
      if (channel.kind === 'inbox' && channel.owner !== principal.id) {
        throw new ToolError(
          `'${channel.name}' is ${channel.owner}'s task inbox; read your own with 'task:${principal.id}'`,
          'CHANNEL_NOT_YOURS',
        );
      }
      channels = [channel.name];
    }
    const prefixed = channels.length > 1;

    const lines: string[] = [];
    let more = false;
    // Control messages addressed to others are consumed and dropped; read on so they do not eat
    // the caller's limit, but only for a bounded number of rounds.
    for (let round = 0; round < MAX_READ_ROUNDS; round++) {
      const wanted = limit - lines.length;
      const batch = await deps.bus.readNew(principal.tenant, principal.id, { channels, limit: wanted });
      for (const message of batch) {
        const shownMessage = render(message, principal.id);
        if (!shownMessage) continue;
        const line = `${shownMessage.actor}: ${clip(shownMessage.text)}`;
        lines.push(prefixed ? `[${message.channel}] ${line}` : line);
      }
      if (batch.length < wanted) break;
      if (lines.length >= limit) {
        more = true;
        break;
      }
      more = round === MAX_READ_ROUNDS - 1;
    }
    return { messages: lines, more };
  };

  return [
    { manifest: sendMessageManifest, handler: { invoke: send } },
    { manifest: readMessagesManifest, handler: { invoke: read } },
  ];
}

function isTaskChannel(channel: Channel): boolean {
  return channel.kind === 'inbox' || channel.name === 'task';
}

/** A surrogate code unit without its pair: no bus could store it as given. */
const LONE_SURROGATE = /\p{Cs}/u;

function messageText(value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '') throw new ToolError('the message is empty: write the text to send', 'INVALID_MESSAGE');
  if (value.length > MAX_MESSAGE_CHARS) {
    throw new ToolError(`the message is ${value.length} characters long; at most ${MAX_MESSAGE_CHARS} are accepted`, 'INVALID_MESSAGE');
  }
  if (value.includes('\u0000') || LONE_SURROGATE.test(value)) {
    throw new ToolError('the message must be plain text (no NUL characters or broken Unicode)', 'INVALID_MESSAGE');
  }
  return value;
}

function readLimit(value: unknown): number {
  if (value === undefined) return DEFAULT_READ_LIMIT;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > MAX_READ_LIMIT) {
    throw new ToolError(`limit must be a whole number from 1 to ${MAX_READ_LIMIT}`, 'INVALID_ARGUMENT');
  }
  return value;
}

/** Messages from other publishers may be longer than `send_message` allows; a line stays bounded. */
function clip(text: string): string {
  return text.length > MAX_MESSAGE_CHARS ? `${text.slice(0, MAX_MESSAGE_CHARS)}…` : text;
}

export {
  createMessagingTools,
  sendMessageManifest,
  readMessagesManifest,
  MAX_MESSAGE_CHARS,
  DEFAULT_READ_LIMIT,
  MAX_READ_LIMIT,
  type MessagingToolDeps,
} from './messaging.tools.js';
export { AS2_CONTEXT, TEAM_IRI_PREFIX, teamIri, type Activity } from './activity.js';
export { BROADCAST_CHANNELS, parseChannel, type Channel } from './channels.js';

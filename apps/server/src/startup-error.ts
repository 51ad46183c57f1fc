/** A startup fault the operator must fix; the message says what and where. */
export class StartupError extends Error {
  override readonly name = 'StartupError';
}

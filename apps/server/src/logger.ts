/** Operator-facing log lines on stderr. Never carries tokens, keys or raw tool arguments. */
export type LogLevel = 'info' | 'warn' | 'error';
export type Log = (level: LogLevel, message: string) => void;

export function createStderrLog(write: (line: string) => void = (line) => process.stderr.write(line)): Log {
  return (level, message) => write(`${new Date().toISOString()} [toolgate] ${level.padEnd(5)} ${message}\n`);
}

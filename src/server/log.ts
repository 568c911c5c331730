/**
 * @module Structured logs: one JSON line per event on stdout. Request lines carry the
 * request id, operation, bucket, key, status, S3 error code, bytes and duration — never
 * credentials, signatures or query strings.
 */

export type LogLevel = 'info' | 'warn' | 'off';

export class Logger {
  readonly #level: LogLevel;
  readonly #write: (line: string) => void;

  constructor(level: LogLevel, write: (line: string) => void = (l) => process.stdout.write(l)) {
    this.#level = level;
    this.#write = write;
  }

  info(msg: string, fields: Record<string, unknown> = {}): void {
    if (this.#level === 'info') this.#emit('info', msg, fields);
  }

  warn(msg: string, fields: Record<string, unknown> = {}): void {
    if (this.#level !== 'off') this.#emit('warn', msg, fields);
  }

  error(msg: string, fields: Record<string, unknown> = {}): void {
    this.#emit('error', msg, fields);
  }

  #emit(level: string, msg: string, fields: Record<string, unknown>): void {
    this.#write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);
  }
}

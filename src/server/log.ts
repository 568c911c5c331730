/**
 * @module Structured logs: one JSON line per event on stdout. Request lines carry the
 * request id, operation, bucket, key, status, S3 error code, bytes and duration — never
 * credentials, signatures or query strings.
 *
 * A line is written once per request, so it is built by hand (no object spread, no
 * whole-object JSON.stringify; strings that need no escaping are quoted as they are) and
 * stdout lines are batched per event-loop turn (stdout-lines.ts). The text is the same
 * JSON as `JSON.stringify({ time, level, msg, ...fields })` would give.
 */
import { writeStdoutLine } from './stdout-lines.js';

export type LogLevel = 'info' | 'warn' | 'off';

/** Characters JSON.stringify escapes in a string (quote, backslash, controls, lone surrogates). */
const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** Names the line itself carries first; a field of that name falls back to JSON.stringify. */
const RESERVED = new Set(['time', 'level', 'msg']);

let isoMs = -1;
let isoText = '';

/** The ISO time of now, re-formatted only when the millisecond changes. */
function isoNow(): string {
  const ms = Date.now();
  if (ms !== isoMs) {
    isoMs = ms;
    isoText = new Date(ms).toISOString();
  }
  return isoText;
}

function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/**
 * One log line (with its newline) for `level`, `msg` and `fields`, in the order given;
 * fields whose value is undefined are left out. Pure apart from the time cache.
 */
export function formatLogLine(level: string, msg: string, fields: Record<string, unknown>): string {
  let out = `{"time":"${isoNow()}","level":${jsonString(level)},"msg":${jsonString(msg)}`;
  for (const name in fields) {
    if (!Object.hasOwn(fields, name)) continue;
    if (RESERVED.has(name)) return `${JSON.stringify({ time: isoNow(), level, msg, ...fields })}\n`;
    const v = fields[name];
    if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
    let text: string;
    if (typeof v === 'string') text = jsonString(v);
    else if (typeof v === 'number') text = Number.isFinite(v) ? String(v) : 'null';
    else if (typeof v === 'boolean') text = v ? 'true' : 'false';
    else {
      const json = JSON.stringify(v);
      if (json === undefined) continue;
      text = json;
    }
    out += `,${jsonString(name)}:${text}`;
  }
  return `${out}}\n`;
}

export class Logger {
  readonly #level: LogLevel;
  readonly #write: (line: string) => void;

  /** `write` receives each line with its newline; by default stdout, batched per event-loop turn. */
  constructor(level: LogLevel, write: (line: string) => void = writeStdoutLine) {
    this.#level = level;
    this.#write = write;
  }

  /** Whether info lines are written (callers skip building fields when not). */
  get infoEnabled(): boolean {
    return this.#level === 'info';
  }

  info(msg: string, fields: Record<string, unknown> = {}): void {
    if (this.#level === 'info') this.#write(formatLogLine('info', msg, fields));
  }

  warn(msg: string, fields: Record<string, unknown> = {}): void {
    if (this.#level !== 'off') this.#write(formatLogLine('warn', msg, fields));
  }

  error(msg: string, fields: Record<string, unknown> = {}): void {
    this.#write(formatLogLine('error', msg, fields));
  }
}

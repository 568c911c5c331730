/**
 * @module Value types of the metrics options: `--metrics-listen` (an address to bind) and
 * `--metrics-token` (a bearer secret, never echoed in error messages).
 */
import { OptionError, type OptionType } from './option-types.js';

export interface ListenAddress {
  host: string;
  port: number;
}

/** `host:port`, `[v6]:port` or `:port` (127.0.0.1); throws OptionError naming `origin`. Pure. */
export function parseListen(v: string, origin: string): ListenAddress {
  const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:[\]\s]*)):(\d{1,5})$/.exec(v);
  const port = m ? Number(m[3]) : NaN;
  if (!m || port > 65535) throw new OptionError(`${origin}: must be host:port, [ipv6]:port or :port`);
  return { host: m[1] ?? (m[2] || '127.0.0.1'), port };
}

/** A listen address (see parseListen). */
export function listenType(): OptionType<ListenAddress> {
  return {
    placeholder: '<host:port>',
    parse(raw, origin) {
      if (typeof raw !== 'string' || raw.length > 300) throw new OptionError(`${origin}: expected host:port`);
      return parseListen(raw, origin);
    },
    format: (v) => `${v.host.includes(':') ? `[${v.host}]` : v.host}:${v.port}`,
  };
}

/** Shortest bearer token accepted: shorter ones can be guessed by trying. */
export const MIN_TOKEN_CHARS = 16;

/** A bearer token: 16-256 printable ASCII characters without spaces. Errors never show it. */
export function tokenType(): OptionType<string> {
  return {
    placeholder: '<token>',
    parse(raw, origin) {
      if (typeof raw !== 'string' || !/^[\x21-\x7e]{16,256}$/.test(raw)) {
        throw new OptionError(`${origin}: must be ${MIN_TOKEN_CHARS} to 256 printable ASCII characters without spaces`);
      }
      return raw;
    },
    format: () => '<token>',
  };
}

#!/usr/bin/env node
/**
 * @module The `strata` command.
 *
 *   strata serve   [--host H] [--port P] [--data DIR]   the S3 server (npm start)
 *   strata verify  [DIR|URL] [--json]                    check a repository end to end
 *   strata keys    list|create|delete|grant|revoke ...   access keys (see cli/keys.ts)
 */
import { verifyCommand } from './verify.js';

const USAGE = `usage: strata <command> [options]

commands:
  serve  [--host H] [--port P] [--data DIR]   run the S3 server (default 127.0.0.1:9000, ./data)
  verify [DIR|URL] [--json]                    check every commit, run and pack of a repository
  keys   list|create|delete|grant|revoke ...    manage access keys (strata keys --help)
`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'verify':
      return verifyCommand(rest);
    case 'keys': {
      const { keysCommand } = await import('./keys.js');
      return keysCommand(rest);
    }
    case 'serve': {
      const { serveCommand } = await import('./serve.js');
      return serveCommand(rest);
    }
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      process.stdout.write(USAGE);
      return command === undefined ? 2 : 0;
    default:
      process.stderr.write(`strata: unknown command '${command}'\n${USAGE}`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`strata: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 2;
  }
);

/**
 * @module `strata serve`: runs the S3 server until SIGINT/SIGTERM (options: the table in
 * server/config.ts). A first signal stops gracefully (requests in flight may finish within
 * --shutdown-timeout, and the log says what is being waited for); a second one exits at
 * once. With TLS, SIGHUP re-reads the certificate and key.
 */
import { configFromArgs, SERVE_POSITIONALS, SERVER_OPTIONS } from '../server/config.js';
import type { OptionDef } from '../server/options.js';
import { startedByNpm, watchParent } from './parent-watch.js';
import type { Verb } from './verb.js';
import { missingNodeEnv, missingNodeFlags } from './node-flags.js';

const NOTES = `environment only (never flags: a command line is visible to every local user):
  STRATA_ACCESS_KEY, STRATA_SECRET_KEY   an admin key pair (else the config file's
                                         "credentials", else a pair generated on first start)
  STRATA_MASTER_KEY                      the master key, 64 hex characters or base64 of 32 bytes

sizes take units (512KiB, 64MiB, 1GiB; plain numbers are bytes); durations too (30s, 5m, 7d).
precedence: flags, then environment, then the config file, then defaults.

signals: SIGTERM/SIGINT stop gracefully (a second one exits at once); SIGHUP reloads the TLS
certificate. exit codes: 0 stopped, 1 could not start or failed, 2 bad command line or config.`;

/** Exit code after a second stop signal: the conventional 128 + SIGINT. */
const FORCED_EXIT_CODE = 130;

export const serveVerb: Verb = {
  name: 'serve',
  summary: 'run the S3 server',
  synopsis: '[options]',
  description: 'Runs the S3 server on a repository until SIGTERM or SIGINT.',
  options: SERVER_OPTIONS as readonly OptionDef<never>[],
  positionals: SERVE_POSITIONALS,
  notes: NOTES,
  async run(args, env) {
    const config = configFromArgs(args, env);
    const { startServer } = await import('../server/server.js');
    const server = await startServer(config, { notify: (m) => process.stderr.write(`strata: ${m}\n`) });
    process.stderr.write(
      `Strata S3 server on ${server.url} (data: ${config.data}${server.accessKeyId ? `, access key ${server.accessKeyId}` : ''})\n`
    );
    const onHup = () => {
      try {
        const t = server.reloadTls();
        process.stderr.write(
          `strata: TLS certificate reloaded (${t.subject}, valid to ${t.validTo})\n`
        );
      } catch (err) {
        process.stderr.write(
          `strata: TLS reload failed, still serving the previous certificate: ${(err as Error).message}\n`
        );
      }
    };
    const missing = [...missingNodeFlags(process.execArgv), ...missingNodeEnv(process.env)];
    if (missing.length) {
      process.stderr.write(
        `strata: note: node was started without ${missing.join(' ')} (the strata command and npm start pass them): large uploads and listings may run slower (node-flags.ts)\n`
      );
    }
    if (server.tls) process.on('SIGHUP', onHup);
    let unwatch = () => {};
    const signal = await new Promise<string>((resolve) => {
      process.once('SIGINT', resolve);
      process.once('SIGTERM', resolve);
      if (startedByNpm(env)) unwatch = watchParent((pid) => resolve(`npm (pid ${pid}) exited`));
    });
    unwatch();
    process.stderr.write(
      `strata: ${signal}: stopping (waiting up to ${(config.shutdownTimeout ?? 0) / 1000} s for requests in flight; signal again to exit now)\n`
    );
    const force = (again: NodeJS.Signals) => {
      process.stderr.write(`strata: ${again} again: exiting now\n`);
      process.exit(FORCED_EXIT_CODE);
    };
    process.once('SIGINT', force);
    process.once('SIGTERM', force);
    await server.close();
    process.off('SIGHUP', onHup);
    process.off('SIGINT', force);
    process.off('SIGTERM', force);
    return 0;
  },
};

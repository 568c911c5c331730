/**
 * @module `strata serve`: runs the S3 server until SIGINT/SIGTERM (see server/config.ts
 * for flags and environment).
 */
import { resolveConfig } from '../server/config.js';
import { startServer } from '../server/server.js';

export async function serveCommand(args: string[]): Promise<number> {
  const config = resolveConfig(args);
  const server = await startServer(config);
  process.stderr.write(`Strata S3 server on ${server.url} (data: ${config.data}${server.accessKeyId ? `, access key ${server.accessKeyId}` : ''})\n`);
  await new Promise<void>((resolve) => {
    const stop = () => resolve();
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await server.close();
  return 0;
}

import { loadConfig } from '../../src/config.ts';
import { openPlatform } from '../../src/server.ts';

/** Initialises and migrates a PGlite platform in the data directory given as the argument (see globalSetup.ts). */
const dataDir = process.argv[2];
const platform = await openPlatform(
  loadConfig({ ...process.env, DATABASE_URL: '', MEDIAPLANE_DATA_DIR: dataDir, MEDIAPLANE_ADMIN_TOKEN: 'template', LOG_LEVEL: 'warn' }),
);
await platform.close();

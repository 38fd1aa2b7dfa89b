// The tenant's commands (`login`, `upload`, `assets`, `files`, `channels`, `webhooks`, `keys`, `completion`): the
// API through the SDK, with the credentials `login` stored. Registering them loads nothing but commander: each
// action imports its code when it runs, so that a command starts about as fast as Node.
import type { Command } from 'commander';
import type { OutputOptions } from './output.ts';

const PROFILE = ['--profile <name>', 'the stored profile to use (default: MEDIAPLANE_PROFILE, else "default")'] as const;
const JSON_FLAG = ['--json', 'print one JSON document on standard output, nothing else'] as const;

/** Runs an action's code through `runCommand`: the API's message on standard error, a non-zero exit. */
function action<A extends unknown[], O extends OutputOptions>(load: () => Promise<(...args: [...A, O]) => Promise<void>>) {
  return async (...args: unknown[]) => {
    const opts = args[args.length - 2] as O;
    const { runCommand } = await import('./output.ts');
    await runCommand(opts, async () => (await load())(...(args.slice(0, -2) as A), opts));
  };
}

const list = (parent: Command, name: string, description: string) =>
  parent
    .command(name)
    .description(description)
    .option('--limit <n>', 'at most this many, newest first (default 100)')
    .option(...PROFILE)
    .option(...JSON_FLAG);

const one = (parent: Command, name: string, description: string) =>
  parent
    .command(name)
    .description(description)
    .option(...PROFILE)
    .option(...JSON_FLAG);

export function registerTenantCommands(program: Command): void {
  program
    .command('login')
    .description('check a tenant API key and store it as a profile (in $XDG_CONFIG_HOME/mediaplane or ~/.config/mediaplane, mode 0600)')
    .requiredOption('--url <url>', "the platform's address, e.g. https://media.example.org")
    .requiredOption('--tenant-id <id>', 'the tenant id (X-Tenant-Id)')
    .requiredOption('--api-key <key>', 'an API key of the tenant (X-Api-Key)')
    .option('--profile <name>', 'the profile to store (default: MEDIAPLANE_PROFILE, else "default")')
    .option(...JSON_FLAG)
    .action(action(async () => (await import('./login.ts')).login));

  program
    .command('upload')
    .description('upload files in parallel parts and make an asset of each (a progress bar per file on a terminal)')
    .argument('<files...>', 'the files to upload')
    .option('--preset <preset>', 'the transcoding preset of the assets (GET /transcoder/v1/presets)', 'hls-h264-ladder')
    .option('--title <title>', "the assets' title (default: the file name)")
    .option('--wait', 'return once every asset is Available (exits non-zero if one fails)')
    .option('--concurrency <n>', 'parts in flight at once per file (default 4)')
    .option(...PROFILE)
    .option(...JSON_FLAG)
    .action(action(async () => (await import('./upload.ts')).upload));

  const assets = program.command('assets').description('VOD assets');
  list(assets, 'list', 'list assets')
    .option('--query <text>', 'search')
    .action(action(async () => (await import('./resources.ts')).assetsList));
  one(assets, 'get', 'show an asset and its playback URLs')
    .argument('<id>')
    .action(action(async () => (await import('./resources.ts')).assetsGet));
  one(assets, 'delete', 'delete an asset and its outputs')
    .argument('<id>')
    .action(action(async () => (await import('./resources.ts')).assetsDelete));

  const files = program.command('files').description('uploaded files');
  list(files, 'list', 'list uploaded files')
    .option('--query <text>', 'search')
    .action(action(async () => (await import('./resources.ts')).filesList));
  one(files, 'import', 'make a file of an http(s) URL: the platform fetches it')
    .argument('<url>')
    .option('--name <name>', "the file's name, whose extension gives its type (default: the URL's last path segment)")
    .option('--friendly-name <name>', 'its friendly name (default: the name)')
    .option('--wait', 'return once the file is Completed (exits non-zero if it ends in Error)')
    .action(action(async () => (await import('./resources.ts')).filesImport));

  const channels = program.command('channels').description('live channels');
  list(channels, 'list', 'list live channels').action(action(async () => (await import('./resources.ts')).channelsList));
  for (const verb of ['start', 'stop'] as const) {
    one(channels, verb, `${verb} a live channel`)
      .argument('<id>')
      .action(action(async () => (await import('./resources.ts')).channelsSwitch.bind(undefined, verb)));
  }
  one(channels, 'status', "show a live channel's status")
    .argument('<id>')
    .action(action(async () => (await import('./resources.ts')).channelsStatus));

  const webhooks = program.command('webhooks').description('webhooks');
  one(webhooks, 'tail', 'print webhook delivery attempts as they happen (with --json: one array when it stops)')
    .option('--webhook <id>', 'only the deliveries to this webhook')
    .option('--count <n>', 'stop after this many attempts')
    .option('--interval <ms>', 'how often the event log is read (default 1000)')
    .action(action(async () => (await import('./webhooksTail.ts')).webhooksTail));

  const keys = program.command('keys').description('API keys (needs an Admin key)');
  list(keys, 'list', 'list API keys').action(action(async () => (await import('./resources.ts')).keysList));
  one(keys, 'create', 'create an API key; prints its secret once')
    .argument('<name>')
    .option('--role <role>', 'Admin, Editor or Viewer', 'Viewer')
    .action(action(async () => (await import('./resources.ts')).keysCreate));
  one(keys, 'delete', 'delete an API key')
    .argument('<id>')
    .action(action(async () => (await import('./resources.ts')).keysDelete));

  program
    .command('completion')
    .description('print a shell completion script: source <(mediaplane completion bash), or zsh')
    .argument('<shell>', 'bash or zsh')
    .action(async (shell: string) => {
      if (shell !== 'bash' && shell !== 'zsh') {
        process.stderr.write(`Error: completion for bash or zsh, not ${shell}\n`);
        process.exitCode = 1;
        return;
      }
      const { completionScript } = await import('./completion.ts');
      process.stdout.write(completionScript(program, shell));
    });
}

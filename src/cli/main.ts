#!/usr/bin/env node
/** The `baton` command. */
import { Command } from 'commander';
import { decideCommand, signalCommand } from './decide-command.ts';
import { gcCommand, lsCommand, showCommand } from './inspect-commands.ts';
import { type CliConfig, loadCliConfig } from './load-config.ts';
import { mcpCommand } from './mcp-command.ts';
import { exitCodeFor, printError } from './output.ts';
import { parseTimeCommand } from './parse-time-command.ts';
import { resumeCommand, runCommand } from './run-commands.ts';
import { serveCommand } from './serve-command.ts';
import { workerCommand } from './worker-command.ts';

export async function main(argv: string[]): Promise<number> {
  let code = 0;
  let json = false;
  let config: CliConfig | undefined;
  const program = new Command()
    .name('baton')
    .description('A durable, time-aware runtime for agent and LLM tool pipelines')
    .option(
      '--db <path|url>',
      'a SQLite file, or postgres://user:password@host/db[?schema=name] (default: $BATON_DATABASE_URL, $BATON_DB, the config’s db, ./baton.db)',
    )
    .option('--config <file>', 'the configuration file (default: baton.config.{ts,mts,js,mjs} here)')
    .option('--json', 'machine-readable output on stdout')
    .showHelpAfterError()
    .exitOverride();
  /** The global options and the configuration every command reads (loaded once, checked first). */
  const common = async () => {
    const o = program.opts<{ db?: string; config?: string; json?: boolean }>();
    json = o.json ?? false;
    config ??= await loadCliConfig(o.config);
    // Read here, not as commander's default, so `--help` never prints a URL (and its password).
    const db = o.db ?? process.env.BATON_DATABASE_URL ?? process.env.BATON_DB ?? config.db ?? './baton.db';
    return { db, json, config };
  };

  program
    .command('run')
    .description('run a flow or task module (.ts/.js) or a JSON plan, here and now')
    .argument('<file>', 'flow module or plan.json')
    .option('--input <json>', 'input as JSON, or @file.json')
    .option('--tasks <module>', 'module that defines the tasks a JSON plan uses (besides the config’s)')
    .option('--flow <name>', 'which flow or task of the module to run')
    .option('--id <id>', 'your own run id')
    .option('--budget <duration>', 'time budget, e.g. 75m')
    .option('--fast-mode', 'timeouts halved, one retry, partial results accepted readily')
    .option('--mode <mode>', 'research mode for the timeouts: codebase, docs, external, dual')
    .option('--unattended', 'never prompt: escalations are answered by the task’s policy')
    .action(async (file: string, o: Record<string, string>) => {
      code = await runCommand(file, { ...(await common()), ...o });
    });
  program
    .command('resume')
    .description('continue a run from its last checkpoint (or print the result of a finished one)')
    .argument('<id>')
    .option('--tasks <module>', 'module that defines the run’s tasks (default: the one it was started from)')
    .option('--again', 'run again a run that an answer (continue_partial, skip, abandon…) ended')
    .action(async (id: string, o: { tasks?: string; again?: boolean }) => {
      code = await resumeCommand(id, { ...(await common()), ...o });
    });
  program
    .command('decide')
    .description('answer the escalation a run is waiting on (without a choice: show the question)')
    .argument('<id>')
    .argument(
      '[choice]',
      'retry_extended | continue_partial | skip | different_mode | manual_input | abandon',
    )
    .option('--mode <mode>', 'the new mode for different_mode')
    .option('--input <json>', 'the findings for manual_input, as JSON or @file.json')
    .action(async (id: string, choice: string | undefined, o: { mode?: string; input?: string }) => {
      code = await decideCommand(id, choice, { ...(await common()), ...o });
    });
  program
    .command('signal')
    .description('send a signal to a run; its ctx.waitFor(name) reads it once (kept until then)')
    .argument('<id>')
    .argument('<name>')
    .option('--payload <json>', 'the payload, as JSON or @file.json (default: null)')
    .action(async (id: string, name: string, o: { payload?: string }) => {
      code = await signalCommand(id, name, { ...(await common()), ...o });
    });
  program
    .command('serve')
    .description('serve the HTTP API (runs, resume, decisions, SSE events, health, metrics) with a worker')
    .option('--host <host>', 'address to bind; any but loopback needs a token', '127.0.0.1')
    .option('--port <port>', 'port', '8080')
    .option('--token <token>', 'bearer token required on every route but /health (default: $BATON_TOKEN)')
    .option('--tasks <module>', 'module defining the tasks and flows (besides the config’s)')
    .option('--dashboard', 'serve the web dashboard at /dashboard')
    .option('--read-only', 'refuse every change (start, resume, decide, cancel); the dashboard only shows')
    .option(
      '--no-worker',
      'serve only, execute nothing (e.g. a dashboard beside the app that runs the tasks)',
    )
    .option('--mcp', 'also serve the tasks as MCP tools (Streamable HTTP) at /mcp')
    .option(
      '--allow-host <names>',
      'host names requests may be addressed to, comma-separated (default on loopback: localhost, 127.0.0.1, ::1)',
    )
    .option(
      '--allow-origin <origins>',
      'origins besides the server’s own whose pages may call it, comma-separated',
    )
    .action(
      async (o: {
        host: string;
        port: string;
        token?: string;
        tasks?: string;
        dashboard?: boolean;
        readOnly?: boolean;
        worker?: boolean;
        mcp?: boolean;
        allowHost?: string;
        allowOrigin?: string;
      }) => {
        code = await serveCommand({ ...(await common()), ...o });
      },
    );
  program
    .command('mcp')
    .description('serve the tasks as MCP tools over stdio, for a local MCP client (with a worker)')
    .option('--tasks <module>', 'module defining the tasks (besides the config’s)')
    .option(
      '--reply-within <duration>',
      'answer a call with partial findings and a run id after this long',
      '50s',
    )
    .action(async (o: { tasks?: string; replyWithin?: string }) => {
      code = await mcpCommand({ ...(await common()), ...o });
    });
  program
    .command('worker')
    .description('execute queued runs until interrupted; start several to share the work')
    .option('--tasks <module>', 'module defining the tasks to execute (besides the config’s)')
    .option('--concurrency <n>', 'attempts running at once', '10')
    .action(async (o: { tasks?: string; concurrency: string }) => {
      code = await workerCommand({ ...(await common()), ...o });
    });
  program
    .command('parse-time')
    .description(
      'show the instant a delivery time expression means ("in 2 minutes", "明天早上9点", ISO 8601)',
    )
    .argument('<expression>')
    .option('--tz <zone>', 'IANA time zone to read it in (default: the system’s)')
    .option('--now <iso>', 'the reference instant (default: now)')
    .option('--lang <lang>', 'the language the expression is written in, en or zh (default: by its script)')
    .action(async (expression: string, o: { tz?: string; now?: string; lang?: string }) => {
      const { json, config } = await common();
      const tz = o.tz ?? config.options.schedule?.defaultTimezone;
      code = await parseTimeCommand(expression, { ...o, ...(tz ? { tz } : {}), json });
    });
  program
    .command('ls')
    .description('list runs, newest first')
    .option('--status <status>', 'only runs in this status')
    .option('--limit <n>', 'at most this many', '50')
    .option('--threads', 'list only the LangGraph threads (baton/langgraph) kept in the database')
    .action(async (o: { status?: string; limit?: string; threads?: boolean }) => {
      code = await lsCommand({ ...(await common()), ...o });
    });
  program
    .command('show')
    .description(
      "a run's timeline: events, steps, checkpoints, partial findings, result (or a LangGraph thread's checkpoints)",
    )
    .argument('<id>')
    .action(async (id: string) => {
      code = await showCommand(id, await common());
    });
  program
    .command('gc')
    .description('delete runs and LangGraph threads whose time to live has passed')
    .action(async () => {
      code = await gcCommand(await common());
    });

  try {
    await program.parseAsync(argv);
    return code;
  } catch (err) {
    const c = (err as { code?: string; exitCode?: number }).code;
    if (typeof c === 'string' && c.startsWith('commander.')) {
      if (c === 'commander.helpDisplayed' || c === 'commander.version' || c === 'commander.help') return 0;
      return 2;
    }
    printError(err, json);
    return exitCodeFor(err);
  } finally {
    config?.close();
  }
}

const invokedDirectly = process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*[\\/]/, ''));
if (invokedDirectly || process.env.BATON_CLI_MAIN === '1') {
  main(process.argv).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      printError(err, false);
      process.exitCode = 70;
    },
  );
}

/**
 * Builds the package's JavaScript: every entry point of package.json's `exports`, the CLI and the
 * task-thread entry, bundled by esbuild with code splitting (shared code in `dist/chunks/`, one
 * instance of each module across `baton`, `baton/http`, … since they share the chunks), the npm
 * dependencies left as imports. The declarations stay tsc's (`tsc --emitDeclarationOnly`).
 *
 * Why a bundle (issue 15 item 4): on Node 20, importing an ES module costs ~0.6 ms of resolving,
 * reading and compiling per file before any of its code runs, and `import 'baton'` reached ~190 of
 * Baton's files: 120–140 ms of the import was that per-file cost (`node --cpu-prof`: the time is in
 * `compileSourceTextModule`, the resolver and file reads, not in Baton's module code). Bundled, the
 * root loads ~15 files.
 *
 * Each module keeps the `import.meta.url` it has unbundled (`dist/<its path>.js`): the modules that
 * find files beside themselves (migrations, the task-thread entry, the dashboard's bundle) or
 * resolve from there keep working wherever esbuild put their code. A first pass learns from the
 * metafile which output file holds each such module; the second rewrites its `import.meta.url` to
 * that module's unbundled URL, relative to the output file.
 *
 *   tsx scripts/bundle.ts [outdir]   # default dist/
 */
import { cpSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, build, type Plugin } from 'esbuild';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');

/** The source file of each entry: package.json's exports (dist/x.js ← src/x.ts), the CLI, the thread entry. */
export function entryPoints(): string[] {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    exports: Record<string, string | { default: string }>;
  };
  const fromExports = Object.values(pkg.exports)
    .filter((e): e is { default: string } => typeof e === 'object')
    .map((e) => join(SRC, e.default.replace(/^\.\/dist\//, '').replace(/\.js$/, '.ts')));
  return [...fromExports, join(SRC, 'cli', 'main.ts'), join(SRC, 'runtime', 'thread', 'thread-main.ts')];
}

/** The spans of `import.meta.url` in code (not in strings or comments), last first. */
function importMetaUrls(file: string, text: string): Array<[number, number]> {
  const spans: Array<[number, number]> = [];
  const visit = (node: ts.Node): void => {
    if (
      ts.isPropertyAccessExpression(node) &&
      ts.isMetaProperty(node.expression) &&
      node.expression.keywordToken === ts.SyntaxKind.ImportKeyword &&
      node.name.text === 'url'
    )
      spans.push([node.getStart(), node.getEnd()]);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true));
  return spans.sort((a, b) => b[0] - a[0]);
}

/** Replaces `import.meta.url` in each file that uses it with its unbundled URL (`dist/<path>.js`). */
function ownUrls(outputOf: ReadonlyMap<string, string>, outdir: string): Plugin {
  return {
    name: 'own-import-meta-url',
    setup(b) {
      b.onLoad({ filter: /\.ts$/ }, (args) => {
        if (!args.path.startsWith(SRC)) return undefined;
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('import.meta.url')) return undefined;
        const output = outputOf.get(relative(ROOT, args.path));
        if (output === undefined) return undefined; // first pass: only learning where code goes
        const unbundled = join(outdir, relative(SRC, args.path)).replace(/\.ts$/, '.js');
        const rel = relative(dirname(join(ROOT, output)), unbundled)
          .split('\\')
          .join('/');
        const url = `new URL(${JSON.stringify(rel.startsWith('.') ? rel : `./${rel}`)}, import.meta.url).href`;
        let contents = text;
        for (const [start, end] of importMetaUrls(args.path, text))
          contents = contents.slice(0, start) + url + contents.slice(end);
        return { contents, loader: 'ts' };
      });
    },
  };
}

export async function bundle(outdir = join(ROOT, 'dist')): Promise<void> {
  const options: BuildOptions = {
    entryPoints: entryPoints(),
    outbase: SRC,
    outdir,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20.19',
    packages: 'external',
    chunkNames: 'chunks/[name]-[hash]',
    sourcemap: true,
    metafile: true,
    absWorkingDir: ROOT,
    logLevel: 'warning',
  };
  const learned = await build({ ...options, write: false });
  const outputOf = new Map<string, string>();
  if (!learned.metafile) throw new Error('esbuild returned no metafile');
  for (const [output, info] of Object.entries(learned.metafile.outputs))
    for (const input of Object.keys(info.inputs)) if (output.endsWith('.js')) outputOf.set(input, output);
  await build({ ...options, plugins: [ownUrls(outputOf, outdir)] });
  // Files read at run time beside their module.
  for (const store of ['sqlite', 'postgres'])
    cpSync(join(SRC, 'store', store, 'migrations'), join(outdir, 'store', store, 'migrations'), {
      recursive: true,
    });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1])
  await bundle(process.argv[2] ? resolve(process.argv[2]) : undefined);

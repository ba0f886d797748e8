/**
 * Every name `import 'baton'` gives is documented where it is declared (what an editor shows on
 * hover), read through TypeScript's own checker so a re-export chain cannot hide a missing comment.
 * In the e2e lane: building a program for the whole import graph takes seconds.
 */
import { resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const ENTRY = resolve(import.meta.dirname, '..', 'src', 'index.ts');

describe('the root export', () => {
  it('documents every name it exports', () => {
    const program = ts.createProgram([ENTRY], {
      allowImportingTsExtensions: true,
      noEmit: true,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      target: ts.ScriptTarget.ES2023,
      strict: true,
    });
    const checker = program.getTypeChecker();
    const source = program.getSourceFile(ENTRY);
    const module = source && checker.getSymbolAtLocation(source);
    if (!module) throw new Error('src/index.ts did not load');
    const exported = checker.getExportsOfModule(module);
    expect(exported.length).toBeGreaterThan(30);
    const undocumented = exported
      .filter((symbol) => {
        const target = symbol.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(symbol) : symbol;
        return ts.displayPartsToString(target.getDocumentationComment(checker)).trim() === '';
      })
      .map((symbol) => symbol.name);
    expect(undocumented).toEqual([]);
  });
});

/**
 * Data references (protocol 002, sections 2 and 3): validate `data_reference`s, find them in a
 * step's input, resolve task outputs (RFC 9535 JSONPath, filter, transform), workspace files
 * (md, txt, json, pdf) and declared database tables, and turn every failure into a
 * `resolution_failure` record handled by the protocol's fallback strategies.
 */
export {
  findReferences,
  hasReferences,
  type Pointer,
  pointerKey,
  referencedTaskIds,
  SKIPPED,
  substituteReferences,
} from './find-references.ts';
export { createJsonPathEnvironment } from './jsonpath-query.ts';
export {
  type Condition,
  conditionSchema,
  type DataReference,
  type DbQueryReference,
  dataReferenceSchema,
  type FallbackConfig,
  type FallbackConfigInput,
  FallbackStrategies,
  type FallbackStrategy,
  type FileFormat,
  FileFormats,
  type FileReference,
  type FilterOperator,
  FilterOperators,
  fallbackConfigSchema,
  parseDataReference,
  parseFallbackConfig,
  type RefType,
  RefTypes,
  type TaskOutputReference,
  type Transform,
  Transforms,
} from './reference-schema.ts';
export {
  AppliedStrategies,
  type AppliedStrategy,
  DefaultFallbacks,
  type FallbackPlan,
  isAbortedResolution,
  type RefErrorCode,
  RefErrorCodes,
  type ResolutionFailure,
  resolutionFailureSchema,
} from './resolution-failure.ts';
export {
  createResolver,
  type Resolution,
  type ResolvedInput,
  type ResolvedReference,
  type Resolver,
} from './resolver.ts';
export {
  checkRunsPermission,
  type RefPermissions,
  type ResolveOptions,
  type ResolverOptions,
  type RunsPermission,
  RunsPermissions,
} from './resolver-options.ts';
export {
  type SqlExecutor,
  type SqlStatement,
  sqliteExecutor,
  type TableDeclaration,
  type TableDeclarations,
} from './sql-query.ts';
export type { GetTaskOutput, TaskOutputRecord } from './task-output.ts';
export { type Summarize, structuralSummary } from './transform-values.ts';

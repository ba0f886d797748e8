/**
 * The client's wire types are the server's (issue 15 item 6): the server builds each body typed by
 * them, so a field the server adds reaches the client's types. The second copy the client kept had
 * drifted (no `children`/`decisions` on a run's details, no `warnings` in health). Checked by
 * `npm run typecheck` as well as run.
 */
import { describe, expectTypeOf, it } from 'vitest';
import type { DecisionRequest } from '../core/index.ts';
import type * as server from '../http/index.ts';
import type { OpenDecision } from '../runtime/index.ts';
import type { StoreWarning } from '../store/index.ts';
import type * as client from './index.ts';

describe('wire types', () => {
  it("are the server's own", () => {
    expectTypeOf<client.RunDetails>().toEqualTypeOf<server.RunDetails>();
    expectTypeOf<client.RunPage>().toEqualTypeOf<server.RunPage>();
    expectTypeOf<client.Health>().toEqualTypeOf<server.Health>();
    expectTypeOf<client.AcceptedBody>().toEqualTypeOf<server.AcceptedBody>();
    expectTypeOf<client.TimeoutBody>().toEqualTypeOf<server.TimeoutBody>();
    expectTypeOf<client.DecisionBody>().toEqualTypeOf<server.DecisionBody>();
  });

  it('carry what the server sends', () => {
    expectTypeOf<client.RunDetails['children']>().toEqualTypeOf<client.RunRow[] | undefined>();
    expectTypeOf<client.RunDetails['decisions']>().toEqualTypeOf<OpenDecision[] | undefined>();
    expectTypeOf<client.Health['store']['warnings']>().toEqualTypeOf<StoreWarning[] | undefined>();
    expectTypeOf<client.DecisionBody['decision']>().toEqualTypeOf<DecisionRequest>();
  });
});

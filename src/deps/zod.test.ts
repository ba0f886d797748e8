import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { lazySchema, schemasOnFirstUse, zod } from './index.ts';

describe('zod on first use', () => {
  it('is the zod a user imports (one instance, not the CommonJS copy)', () => {
    expect(zod()).toBe(z);
  });

  it('builds a lazy schema on first use, once, and it behaves as the schema it stands for', () => {
    let builds = 0;
    const point = lazySchema((zz) => {
      builds += 1;
      return zz.strictObject({ x: zz.number({ error: 'a number' }) });
    });
    expect(builds).toBe(0);
    expect(point.parse({ x: 1 })).toEqual({ x: 1 });
    expect(point.safeParse({ x: 'a' }).error?.issues[0]?.message).toBe('a number');
    const { safeParse } = point; // detached members stay bound to the real schema
    expect(safeParse({ x: 2, y: 3 }).success).toBe(false);
    expect(point instanceof z.ZodObject).toBe(true);
    expect(Object.keys(point.shape)).toEqual(['x']);
    // Inside another schema, and extended: zod reads it through the proxy.
    expect(z.object({ p: point }).parse({ p: { x: 4 } })).toEqual({ p: { x: 4 } });
    expect(point.extend({ y: z.string() }).parse({ x: 5, y: 'b' })).toEqual({ x: 5, y: 'b' });
    expect(builds).toBe(1);
  });

  it('builds a group of schemas once, on the first call', () => {
    let builds = 0;
    const schemas = schemasOnFirstUse((zz) => {
      builds += 1;
      return { id: zz.string().min(1) };
    });
    expect(builds).toBe(0);
    expect(schemas().id.safeParse('').success).toBe(false);
    expect(schemas().id.parse('a')).toBe('a');
    expect(builds).toBe(1);
  });
});

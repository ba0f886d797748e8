/**
 * luxon, loaded the first time a schedule is read or a time zone checked instead of when Baton is
 * imported: 262 kB of the ~830 kB `import 'baton'` compiled (issue 15 item 4). Its callers
 * (`parseSchedule`, `checkZone`) are synchronous, hence `esmOnFirstUse` rather than `import()`.
 */
import { esmOnFirstUse } from '../deps/index.ts';

export const luxon = esmOnFirstUse<typeof import('luxon')>('luxon');

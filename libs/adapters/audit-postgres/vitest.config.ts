import { toolgateProject } from '../../../vitest.shared.ts';

export default toolgateProject('adapter-audit-postgres', { globalSetup: ['../../testing/src/postgres/global-setup.ts'] });

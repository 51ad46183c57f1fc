import { toolgateProject } from '../../../vitest.shared.ts';

export default toolgateProject('adapter-store-postgres', { globalSetup: ['../../testing/src/postgres/global-setup.ts'] });

import { toolgateProject } from '../../vitest.shared.ts';

export default toolgateProject('server', { globalSetup: ['../../libs/testing/src/postgres/global-setup.ts'], testTimeout: 60_000 });

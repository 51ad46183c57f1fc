import { toolgateProject } from '../../vitest.shared.ts';

export default toolgateProject('testing', { globalSetup: ['src/postgres/global-setup.ts'] });

import { join } from 'node:path';

/** The repository's root folder: the package, its workflows and the harness are found from here. */
export const REPO_ROOT = join(__dirname, '..');

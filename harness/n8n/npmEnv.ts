/**
 * The environment for npm commands run in folders of their own (the runtime cache, an n8n user folder).
 * Started by `npm run …`, the outer npm exported its settings as npm_config_* variables, including this
 * repository's ignore-scripts=true (which would turn `npm rebuild sqlite3` into a no-op), nodedir=/usr
 * and local_prefix: none of them apply to those other folders.
 */
export function cleanNpmEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
	const env = Object.fromEntries(
		Object.entries(process.env).filter(([name]) => !/^npm_/i.test(name)),
	);
	return { ...env, npm_config_update_notifier: 'false', ...extra };
}

import type { SecretUsed, SigningSecrets } from './verdict';

/** The secrets to try, current first; the previous one only while a rotation is under way. */
export function candidateSecrets(secrets: SigningSecrets): Array<{ used: SecretUsed; secret: string }> {
	const list: Array<{ used: SecretUsed; secret: string }> = [{ used: 'current', secret: secrets.current }];
	if (secrets.previous) list.push({ used: 'previous', secret: secrets.previous });
	return list;
}

/** The first secret whose expected MAC matches (`undefined` when none does). */
export function firstMatchingSecret<Key>(
	secrets: SigningSecrets,
	toKey: (secret: string) => Key,
	matches: (key: Key) => boolean,
): SecretUsed | undefined {
	for (const { used, secret } of candidateSecrets(secrets)) {
		if (matches(toKey(secret))) return used;
	}
	return undefined;
}

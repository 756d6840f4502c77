import type { SecretUsed, SigningSecrets } from './verdict';

type CandidateSecret = { used: SecretUsed; secret: string };

/** The secrets to try, current first; the previous one only while a rotation is under way. */
export function candidateSecrets(secrets: SigningSecrets): CandidateSecret[] {
	const current: CandidateSecret = { used: 'current', secret: secrets.current };
	return secrets.previous ? [current, { used: 'previous', secret: secrets.previous }] : [current];
}

/**
 * Why these secrets verify nothing, naming the credential's field, or undefined. A secret that is empty
 * after trimming (an expression on an unset variable, a pasted space) would be an HMAC key anyone can use.
 * An empty Previous Secret means "no rotation under way".
 */
export function unusableSecret(secrets: SigningSecrets): string | undefined {
	if (secrets.current.trim() === '')
		return secrets.current === ''
			? 'Secret is empty'
			: 'Secret holds only whitespace, which anyone could sign with';
	if (secrets.previous !== undefined && secrets.previous !== '' && secrets.previous.trim() === '')
		return 'Previous Secret holds only whitespace, which anyone could sign with; clear it, or paste the old secret';
	return undefined;
}

/**
 * What is wrong with the configured secrets, if anything: the credential test shows it before the first
 * delivery is refused. A pasted secret with a stray space or newline is the classic mistake.
 */
export function secretsProblem(secrets: SigningSecrets): string | undefined {
	const unusable = unusableSecret(secrets);
	if (unusable) return unusable;
	for (const [label, value] of [
		['secret', secrets.current],
		['previous secret', secrets.previous ?? ''],
	] as const) {
		if (value !== value.trim())
			return `The ${label} starts or ends with whitespace (pasted with a newline?)`;
	}
	if (secrets.previous && secrets.previous === secrets.current)
		return 'The previous secret is the same as the secret';
	return undefined;
}

import type { SecretUsed, SigningSecrets } from './verdict';

type CandidateSecret = { used: SecretUsed; secret: string };

/** The secrets to try, current first; the previous one only while a rotation is under way. */
export function candidateSecrets(secrets: SigningSecrets): CandidateSecret[] {
	const current: CandidateSecret = { used: 'current', secret: secrets.current };
	return secrets.previous ? [current, { used: 'previous', secret: secrets.previous }] : [current];
}

/**
 * What is wrong with the configured secrets, if anything: the credential test shows it before the first
 * delivery is refused. A pasted secret with a stray space or newline is the classic mistake.
 */
export function secretsProblem(secrets: SigningSecrets): string | undefined {
	if (secrets.current === '') return 'The secret is empty';
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

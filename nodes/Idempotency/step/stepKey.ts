import { sha256Hex } from '../key/sha256';

/**
 * The idempotency key of one step of one event, for the service's Idempotency-Key header: the SHA-256 of
 * the event's key and the step's name (as a JSON pair, so no two pairs spell the same text), in hex. The
 * same on every run of the event, so a service that honours the header answers a repeat with the first
 * outcome; 64 characters, within every common service's limit (Stripe's is 255).
 */
export function stepKey(eventKey: string, step: string): string {
	return sha256Hex(JSON.stringify([eventKey, step]));
}

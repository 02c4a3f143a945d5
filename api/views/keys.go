package views

import (
	"github.com/paygate/gateway/internal/delivery"
	"github.com/paygate/gateway/internal/merchant"
)

// KeyRoll is the answer of a key roll (docs/api.md, "Keys").
type KeyRoll struct {
	Kind string `json:"kind"` // public or signing
	// Key is the new key, shown this once; null in a replayed answer.
	Key                *string `json:"key"`
	RolledAt           string  `json:"rolledAt"`
	PreviousValidUntil *string `json:"previousValidUntil"`
}

// NewKeyRoll is the answer of r; a replayed roll carries no key.
func NewKeyRoll(r *merchant.KeyRoll) KeyRoll {
	return KeyRoll{Kind: r.Kind, Key: stringOrNil(r.Key), RolledAt: Timestamp(r.RolledAt),
		PreviousValidUntil: TimestampOrNil(r.PreviousValidUntil)}
}

// Keys is the answer of GET /shop/keys: the overlaps in progress.
type Keys struct {
	PublicKey  KeyState `json:"publicKey"`
	SigningKey KeyState `json:"signingKey"`
}

// KeyState is one key's overlap.
type KeyState struct {
	// PreviousValidUntil is when the replaced key stops being valid; null
	// when no overlap is in progress.
	PreviousValidUntil *string `json:"previousValidUntil"`
}

// NewKeys is the answer of GET /shop/keys for st.
func NewKeys(st *merchant.KeyState) Keys {
	return Keys{PublicKey: KeyState{PreviousValidUntil: TimestampOrNil(st.PublicPreviousValidUntil)},
		SigningKey: KeyState{PreviousValidUntil: TimestampOrNil(st.SigningPreviousValidUntil)}}
}

// WebhookSecret is the answer of a webhook secret's roll, the merchant's or
// an endpoint's: the new secret, shown this once.
type WebhookSecret struct {
	Secret             string  `json:"secret"`
	RolledAt           string  `json:"rolledAt"`
	PreviousValidUntil *string `json:"previousValidUntil"`
}

// NewWebhookSecret is the answer of r.
func NewWebhookSecret(r *delivery.SecretRoll) WebhookSecret {
	return WebhookSecret{Secret: r.Secret, RolledAt: Timestamp(r.RolledAt), PreviousValidUntil: TimestampOrNil(r.PreviousValidUntil)}
}

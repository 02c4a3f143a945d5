package client

import (
	"context"
	"errors"
	"time"
)

// Keys are the overlaps of key rolls in progress.
type Keys struct {
	PublicKey  KeyState `json:"publicKey"`
	SigningKey KeyState `json:"signingKey"`
}

// KeyState is when the key a roll replaced stops being valid; nil when no
// overlap is in progress.
type KeyState struct {
	PreviousValidUntil *time.Time `json:"previousValidUntil"`
}

// KeyRollRequest sets the overlap: nil is the gateway's 24 hours; 0 ends
// the replaced key at once; at most 168.
type KeyRollRequest struct {
	OverlapHours *int `json:"overlapHours,omitempty"`
}

// KeyRoll is a roll's answer. Key is the new key, shown once: nil when the
// answer is the replay of an earlier call with the same Idempotency-Key.
type KeyRoll struct {
	Kind               string     `json:"kind"` // public or signing
	Key                *string    `json:"key"`
	RolledAt           time.Time  `json:"rolledAt"`
	PreviousValidUntil *time.Time `json:"previousValidUntil"`
}

// ErrKeyNotShown: the roll was made by an earlier attempt whose answer was
// lost (the retry got the replay, which never shows a key). The key you
// hold is still valid for the overlap: roll again with it, with a new
// Idempotency-Key, and the key you never saw is the one that ends.
var ErrKeyNotShown = errors.New("client: the key roll was done by an earlier attempt, whose answer is lost; roll again")

// Keys is GET /shop/keys.
func (c *Client) Keys(ctx context.Context, opts ...CallOption) (*Keys, error) {
	var out Keys
	if err := c.call(ctx, opGetKeys, nil, nil, &out, opts); err != nil {
		return nil, err
	}
	return &out, nil
}

// RollPublicKey is POST /shop/keys/public/roll. Switch the client to the
// new key (a new Client) once the answer is stored.
func (c *Client) RollPublicKey(ctx context.Context, r KeyRollRequest, opts ...CallOption) (*KeyRoll, error) {
	return c.rollKey(ctx, opRollPublicKey, r, opts)
}

// RollSigningKey is POST /shop/keys/signing/roll: give the receiver both
// keys (CallbackHandlerKeys) until the overlap ends.
func (c *Client) RollSigningKey(ctx context.Context, r KeyRollRequest, opts ...CallOption) (*KeyRoll, error) {
	return c.rollKey(ctx, opRollSigningKey, r, opts)
}

func (c *Client) rollKey(ctx context.Context, op operation, r KeyRollRequest, opts []CallOption) (*KeyRoll, error) {
	var out KeyRoll
	if err := c.call(ctx, op, nil, r, &out, opts); err != nil {
		return nil, err
	}
	if out.Key == nil {
		return &out, ErrKeyNotShown
	}
	return &out, nil
}

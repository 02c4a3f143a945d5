package ledger

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
)

// Command is one unit of work for one merchant, run by the writer inside a
// batch transaction under the merchant's journal head lock (writer.go).
// Every change to a merchant's journal, balances or objects is a Command:
// the core's own (Append, Deposit) and the domains' (cards, network,
// remittances), which implement it, usually through Func.
type Command interface {
	// MerchantID is the merchant whose head the command needs locked.
	MerchantID() int64
	// Prefetch names the rows the command will read (Tx.WantAccount, and
	// the domains' own batch states), so that the writer reads them for
	// the whole batch in its first round trip. It runs before the batch
	// begins: it may only record names. A row it misses is read on demand.
	Prefetch(tx *Tx)
	// Execute decides and applies the command to tx. An error undoes
	// everything it did to tx.
	Execute(tx *Tx) (any, error)
}

// Replayer is a Command whose result, stored as JSON under an idempotency
// key, can be turned back into a value for a repeated request.
type Replayer interface {
	Replay(tx *Tx, stored []byte) (any, error)
}

// Submit runs cmd in the writer and returns its result once the batch
// committed. With idem, a repeated key answers the first outcome
// (idempotency.go); fingerprint identifies the request when idem carries
// none.
func (l *Ledger) Submit(ctx context.Context, cmd Command, idem *Idempotency, fingerprint func() [32]byte) (any, error) {
	k, err := newIdemKey(cmd.MerchantID(), idem, fingerprint)
	if err != nil {
		return nil, err
	}
	return l.w.submit(ctx, cmd, k)
}

// Func is a Command made of functions, whose result is a *T replayed from
// its JSON: the shape of every domain command.
type Func[T any] struct {
	Merchant int64
	// Want names the rows to prefetch (Command.Prefetch); nil: none.
	Want func(tx *Tx)
	// Run decides and applies the command for the locked merchant m.
	Run func(tx *Tx, m *Merchant) (*T, error)
}

// MerchantID implements Command.
func (f *Func[T]) MerchantID() int64 { return f.Merchant }

// Prefetch implements Command.
func (f *Func[T]) Prefetch(tx *Tx) {
	if f.Want != nil {
		f.Want(tx)
	}
}

// Execute implements Command.
func (f *Func[T]) Execute(tx *Tx) (any, error) {
	m, err := tx.Merchant(f.Merchant)
	if err != nil {
		return nil, err
	}
	return f.Run(tx, m)
}

// Replay implements Replayer.
func (f *Func[T]) Replay(_ *Tx, stored []byte) (any, error) {
	v := new(T)
	if err := json.Unmarshal(stored, v); err != nil {
		return nil, fmt.Errorf("ledger: stored idempotent result: %w", err)
	}
	return v, nil
}

// Do submits f and returns its result. Without a fingerprint in idem, the
// request is identified by the SHA-256 of content's JSON.
func Do[T any](ctx context.Context, l *Ledger, idem *Idempotency, content any, f *Func[T]) (*T, error) {
	v, err := l.Submit(ctx, f, idem, func() [32]byte {
		b, _ := json.Marshal(content)
		return sha256.Sum256(b)
	})
	if err != nil {
		return nil, err
	}
	return v.(*T), nil
}

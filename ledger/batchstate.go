package ledger

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/paygate/gateway/postings"
)

// A domain keeps the rows of its own tables that a batch reads and writes in
// a batch state: one value per batch transaction, made on first use, that
// its commands change in memory (each change with an Undo, so that a failed
// command leaves no trace) and that writes itself in the batch's flush
// pipeline with one statement per table. The core knows none of these
// types: a domain declares its kind once, at package level,
//
//	var batchOf = ledger.NewState(func() *batch { return &batch{} })
//
// and reaches the batch's value with batchOf.Of(tx). A value may implement
// any of the interfaces below to take part in the batch's phases.
//
// Kinds are registered when their package is initialised, like database/sql
// drivers, so that a rule a kind enforces on every entry (PostChecker)
// holds on every path that posts, whatever its caller remembered to set up:
// a program that can create a card links the card domain, and with it its
// limits.

// Beginner is a batch state read for every batch, in its first round trip,
// right after the heads of merchants are locked (merchant limits: most
// commands check one).
type Beginner interface {
	Begin(tx *Tx, p *Pipeline, merchants []int64)
}

// Loader is a batch state that queues, in the batch's first round trip, the
// reads of the rows its commands named in Command.Prefetch.
type Loader interface {
	Load(tx *Tx, p *Pipeline)
}

// Flusher is a batch state that writes its rows in the batch's flush
// pipeline, after the journal and before the outbox. States flush in the
// order their kinds were registered, which is the order of the packages'
// initialisation: a package's tables come after those of the packages it
// imports, as their foreign keys need.
type Flusher interface {
	Flush(p *Pipeline)
}

// PostChecker is a batch state that checks every entry posted in the batch,
// by any command, before it is applied: a refusal refuses the entry.
type PostChecker interface {
	CheckPost(tx *Tx, m *Merchant, e *postings.Entry) error
}

// kind is a registered batch state kind.
type kind struct {
	make  func() any
	begin bool // its states implement Beginner
	post  bool // its states implement PostChecker
}

// kinds are every registered kind, in registration order. They are written
// only while packages are initialised.
var kinds []kind

// State is a kind of batch state whose values are T.
type State[T any] struct{ id int }

// NewState registers a kind of batch state made by mk. Call it at package
// level.
func NewState[T any](mk func() T) *State[T] {
	probe := any(mk())
	_, begin := probe.(Beginner)
	_, post := probe.(PostChecker)
	kinds = append(kinds, kind{make: func() any { return mk() }, begin: begin, post: post})
	return &State[T]{id: len(kinds) - 1}
}

// Of returns the batch's value of the kind, made on first use.
func (s *State[T]) Of(tx *Tx) T {
	return tx.state(s.id).(T)
}

func (tx *Tx) state(id int) any {
	if v := tx.states[id]; v != nil {
		return v
	}
	v := kinds[id].make()
	tx.states[id] = v
	return v
}

// beginStates makes the states that every batch reads and queues their
// reads.
func (tx *Tx) beginStates(p *Pipeline, merchants []int64) {
	for id, k := range kinds {
		if k.begin {
			tx.state(id).(Beginner).Begin(tx, p, merchants)
		}
	}
}

// loadStates queues the reads the commands named.
func (tx *Tx) loadStates(p *Pipeline) {
	for _, v := range tx.states {
		if l, ok := v.(Loader); ok {
			l.Load(tx, p)
		}
	}
}

// flushStates queues the writes of the domains' rows.
func (tx *Tx) flushStates(p *Pipeline) {
	for _, v := range tx.states {
		if f, ok := v.(Flusher); ok {
			f.Flush(p)
		}
	}
}

// checkPost runs the domains' checks of an entry.
func (tx *Tx) checkPost(m *Merchant, e *postings.Entry) error {
	for id, k := range kinds {
		if !k.post {
			continue
		}
		if err := tx.state(id).(PostChecker).CheckPost(tx, m, e); err != nil {
			return err
		}
	}
	return nil
}

// MerchantSetup prepares a new merchant's rows in a domain's tables, in the
// transaction that creates the merchant (CreateMerchant).
type MerchantSetup func(ctx context.Context, db bun.IDB, m *Merchant) error

// merchantSetups are the registered set-ups, in registration order.
var merchantSetups []MerchantSetup

// RegisterMerchantSetup adds a set-up that CreateMerchant runs for every new
// merchant (the card domain writes the limits of its KYB tier). Call it
// from a package-level var or init, like NewState.
func RegisterMerchantSetup(fn MerchantSetup) { merchantSetups = append(merchantSetups, fn) }

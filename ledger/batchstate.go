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
// types: a domain declares its kind at package level,
//
//	var batchOf = ledger.NewState(func() *batch { return &batch{} })
//
// lists it in its Domain (domain.go), and reaches the batch's value with
// batchOf.Of(tx). A value may implement any of the interfaces below to take
// part in the batch's phases. Declaring a kind registers nothing: a ledger
// runs the kinds of the domains its Config lists, in that order.

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
// order of Config.Domains: a domain's tables come after those of the
// domains listed before it, as their foreign keys need
// (internal/domains' test holds the list to the schema).
type Flusher interface {
	Flush(p *Pipeline)
}

// PostChecker is a batch state that checks every entry posted in the batch,
// by any command, before it is applied: a refusal refuses the entry.
type PostChecker interface {
	CheckPost(tx *Tx, m *Merchant, e *postings.Entry) error
}

// AccountKnower is a batch state that holds every account of some kind (a
// card's: read with the card, or none for a card new in the batch): an
// account it knows of and the batch does not hold does not exist, and is
// created without a read.
type AccountKnower interface {
	KnowsAccounts(a postings.Account) bool
}

// kind is a batch state kind a ledger runs.
type kind struct {
	make  func() any
	begin bool // its states implement Beginner
	post  bool // its states implement PostChecker
	knows bool // its states implement AccountKnower
}

// StateKind is a kind of batch state, as Domain.States lists it: a
// *State[T].
type StateKind interface{ kind() kind }

// State is a kind of batch state whose values are T.
type State[T any] struct{ mk func() T }

// NewState declares a kind of batch state made by mk. Call it at package
// level; list it in the domain's Domain.States.
func NewState[T any](mk func() T) *State[T] { return &State[T]{mk: mk} }

func (s *State[T]) kind() kind {
	probe := any(s.mk())
	_, begin := probe.(Beginner)
	_, post := probe.(PostChecker)
	_, knows := probe.(AccountKnower)
	return kind{make: func() any { return s.mk() }, begin: begin, post: post, knows: knows}
}

// Of returns the batch's value of the kind, made on first use. A kind of a
// domain the ledger's Config does not list is a programming error: it
// panics, at the first command that uses it, rather than run the domain
// without its checks and its flush.
func (s *State[T]) Of(tx *Tx) T {
	id, ok := tx.l.kindIDs[s]
	if !ok {
		panic("ledger: a batch state of a domain that Config.Domains does not list")
	}
	return tx.state(id).(T)
}

func (tx *Tx) state(id int) any {
	if v := tx.states[id]; v != nil {
		return v
	}
	v := tx.l.kinds[id].make()
	tx.states[id] = v
	return v
}

// beginStates makes the states that every batch reads and queues their
// reads.
func (tx *Tx) beginStates(p *Pipeline, merchants []int64) {
	for id, k := range tx.l.kinds {
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
	for id, k := range tx.l.kinds {
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

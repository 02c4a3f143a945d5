package ledger_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/paygate/gateway/ledger"
	"github.com/paygate/gateway/postings"
)

// A batch of several commands whose COMMIT fails is of unknown outcome: it
// may be in. It is neither retried nor split into single commands, since a
// command without an Idempotency-Key would then post a second time; every
// caller hears EUNAVAILABLE outcome_unknown, and one with a key learns the
// outcome by retrying with it.
//
// The COMMIT is made to fail for real: the hook before it terminates the
// batch's backend (pg_terminate_backend, waiting for the process to end),
// so that COMMIT meets a closed connection. Here the batch is therefore not
// in, and a rerun would post each command once — which the test sees as a
// caller told "success" and an entry in the journal; on a COMMIT that had
// gone in, the same rerun would be the double posting.
func TestGroupCommitUnknownOutcomeIsNotRerun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The commands are gathered into one batch behind a held one; theirs
	// loses its connection at its COMMIT.
	killed := make(chan error, 1)
	var h *heldBatch
	h = holdFirstBatch(t, func(batch int32) {
		if batch == 2 {
			killed <- terminateIdleInTransaction(h.l)
		}
	})
	l, m, before := h.l, h.m, h.before

	const n = 6
	var wg sync.WaitGroup
	errs := make([]error, n)
	keyOf := func(i int) *ledger.Idempotency {
		if i%2 == 1 {
			return nil // half the commands have no key: a rerun would post them again
		}
		return &ledger.Idempotency{Scope: ledger.ScopeLedger, Key: fmt.Sprintf("unknown-%d", i)}
	}
	entryOf := func(i int) postings.Entry {
		return move(m.ID, postings.KindCardFund, fund(m.ID, "USD"), cardAvail(m.ID, "USD", fmt.Sprintf("crd_u%d", i)), 1_00)
	}
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			_, errs[i] = l.Append(ctx, ledger.Batch{Merchant: m.ID, Entries: []postings.Entry{entryOf(i)}, Idempotency: keyOf(i)})
		}(i)
	}
	h.releaseAfter(t, n)
	wg.Wait()
	select {
	case err := <-killed:
		if err != nil {
			t.Fatalf("terminating the batch's backend: %v", err)
		}
	default:
		t.Fatal("the commands' batch never reached its COMMIT")
	}

	for i, err := range errs {
		if postings.ErrorCode(err) != postings.EUNAVAILABLE || !isReasonOf(err, postings.ReasonOutcomeUnknown) {
			t.Errorf("command %d: %v, want EUNAVAILABLE %s", i, err, postings.ReasonOutcomeUnknown)
		}
	}
	after := l.Stats()
	if after.Splits != before.Splits || after.Retries != before.Retries {
		t.Errorf("a COMMIT of unknown outcome was rerun: %d splits, %d retries",
			after.Splits-before.Splits, after.Retries-before.Retries)
	}
	if got := h.batches.Load(); got != 2 {
		t.Errorf("%d batches reached their COMMIT, want 2 (the held one, the commands' one)", got)
	}
	// The batch is not in: the funding lost only the held deposit's gain.
	if got, err := l.Balance(ctx, fund(m.ID, "USD")); err != nil || got != 101_00 {
		t.Errorf("funding = %d (%v), want 101_00: something of the failed batch is in", got, err)
	}
	// A caller with a key learns the outcome by retrying with it: posted
	// now, once.
	for i := 0; i < n; i += 2 {
		res, err := l.Append(ctx, ledger.Batch{Merchant: m.ID, Entries: []postings.Entry{entryOf(i)}, Idempotency: keyOf(i)})
		if err != nil || res.Replayed {
			t.Errorf("retry of command %d with its key: %+v, %v; want a first posting", i, res, err)
		}
	}
	if got, _ := l.Balance(ctx, fund(m.ID, "USD")); got != 101_00-n/2*1_00 {
		t.Errorf("funding = %d after the keyed retries, want %d", got, 101_00-n/2*1_00)
	}
	mustVerify(t, l)
}

// terminateIdleInTransaction ends the one backend of the test's database
// that is inside a transaction between statements (the batch, in its hook
// before COMMIT) and waits until it has exited.
func terminateIdleInTransaction(l *ledger.Ledger) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var n int
	var ok bool
	err := l.DB().QueryRowContext(ctx, `
		select count(*), coalesce(bool_and(pg_terminate_backend(pid, 50000)), false)
		from pg_stat_activity
		where datname = current_database() and pid <> pg_backend_pid() and state = 'idle in transaction'`).Scan(&n, &ok)
	if err != nil {
		return err
	}
	if n != 1 || !ok {
		return fmt.Errorf("%d backends idle in a transaction, terminated: %v; want the batch's alone", n, ok)
	}
	return nil
}

// isReasonOf reports whether err is a postings error with reason.
func isReasonOf(err error, reason postings.Reason) bool {
	return postings.AsError(err).Reason == reason
}

package ledger

import (
	"fmt"
	"sync"

	"github.com/paygate/gateway/postings"
)

// Domain is what a domain package (internal/cards, internal/network, …)
// brings to the journal core: its batch states, the constraints of its
// tables that name a business error or call for a retry, and what it sets
// up for a new merchant. A ledger runs the domains of Config.Domains, in
// that order, and no others: nothing registers itself when its package is
// initialised, so that an import refactor cannot reorder the flush, and the
// app's list shows what runs (internal/domains).
type Domain struct {
	Name string
	// States are the domain's batch state kinds (NewState).
	States []StateKind
	// Tables are the tables its batch states write in the flush, in the
	// order they write them: the test of the list against the schema's
	// foreign keys reads them (internal/domains).
	Tables []string
	// Constraints map a constraint of its tables to the error a violation
	// answers (MapError).
	Constraints map[string]*postings.Error
	// RetryConstraints are constraints whose violation means a value drawn
	// at random collided: the command is run again.
	RetryConstraints []string
	// MerchantSetup, when set, prepares a new merchant's rows in the
	// domain's tables (CreateMerchant).
	MerchantSetup MerchantSetup
}

// useDomains makes the ledger run ds, in order.
func (l *Ledger) useDomains(ds []Domain) {
	l.kindIDs = map[StateKind]int{}
	for _, d := range ds {
		for _, s := range d.States {
			if _, dup := l.kindIDs[s]; dup {
				panic(fmt.Sprintf("ledger: domain %s lists a batch state twice", d.Name))
			}
			l.kindIDs[s] = len(l.kinds)
			l.kinds = append(l.kinds, s.kind())
		}
		for name, err := range d.Constraints {
			addConstraint(name, err)
		}
		for _, name := range d.RetryConstraints {
			addRetryConstraint(name)
		}
		if d.MerchantSetup != nil {
			l.setups = append(l.setups, d.MerchantSetup)
		}
	}
}

// constraintsMu guards the constraint tables (errors.go), which every
// ledger's domains add to: a constraint name is a table's, the same
// whichever ledger meets it, so one table for the process is right; the
// lock is taken on an error's path only.
var constraintsMu sync.RWMutex

func addConstraint(name string, err *postings.Error) {
	constraintsMu.Lock()
	defer constraintsMu.Unlock()
	constraintErrors[name] = err
}

func addRetryConstraint(name string) {
	constraintsMu.Lock()
	defer constraintsMu.Unlock()
	retryConstraints[name] = true
}

package console

import "github.com/paygate/gateway/internal/console/host"

// Roles and what each may do, enforced on the server for every request
// (docs/console.md, "Roles"). A merchant's users see their merchant only;
// the house's (operator, auditor) see no merchant page, and sign in with a
// second factor.
type Role string

const (
	RoleAdmin    Role = "admin"    // a merchant's: everything of the merchant, card actions included
	RoleFinance  Role = "finance"  // a merchant's: reads, CSV, statements, webhook replays
	RoleReadonly Role = "readonly" // a merchant's: reads and CSV
	RoleOperator Role = "operator" // the house's: merchants, FX rates, stuck work; the auditor's pages
	RoleAuditor  Role = "auditor"  // the house's, read-only: the journal, verify, the console's audit trail
)

// merchantRole reports whether the role belongs to a merchant's user.
func (r Role) merchantRole() bool { return r == RoleAdmin || r == RoleFinance || r == RoleReadonly }

// needsTOTP reports whether the role signs in with a second factor.
func (r Role) needsTOTP() bool { return r == RoleOperator || r == RoleAuditor }

// ParseRole checks a role name.
func ParseRole(s string) (Role, bool) {
	switch r := Role(s); r {
	case RoleAdmin, RoleFinance, RoleReadonly, RoleOperator, RoleAuditor:
		return r, true
	}
	return "", false
}

// perm is one thing a page or an action needs: host.Perm, which the page
// packages name their routes' by (internal/console/host).
type perm = host.Perm

const (
	permMerchantRead = host.PermMerchantRead // balances, cards, bill, events, statement
	permCardWrite    = host.PermCardWrite    // freeze, unfreeze, cancel
	permReplay       = host.PermReplay       // replay a webhook event
	permOperate      = host.PermOperate      // merchants, FX, stuck work
	permAudit        = host.PermAudit        // journal, verify, the audit trail
	permSignedIn     = host.PermSignedIn     // anyone signed in (logout)
	permUsers        = host.PermUsers        // a merchant's console users
	permHouseUsers   = host.PermHouseUsers   // the house's console users (operators, auditors)
	permCloses       = host.PermCloses       // the closed periods
)

// allowed is the whole table of who may do what.
var allowed = map[perm][]Role{
	permMerchantRead: {RoleAdmin, RoleFinance, RoleReadonly},
	permCardWrite:    {RoleAdmin},
	permReplay:       {RoleAdmin, RoleFinance},
	permOperate:      {RoleOperator},
	permAudit:        {RoleAuditor, RoleOperator},
	permSignedIn:     {RoleAdmin, RoleFinance, RoleReadonly, RoleOperator, RoleAuditor},
	permUsers:        {RoleAdmin},
	permHouseUsers:   {RoleOperator},
	permCloses:       {RoleAdmin, RoleFinance, RoleOperator, RoleAuditor},
}

func (r Role) may(p perm) bool {
	for _, x := range allowed[p] {
		if x == r {
			return true
		}
	}
	return false
}

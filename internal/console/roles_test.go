package console

import (
	"strings"
	"testing"
)

// The table of roles: each permission names exactly the roles docs/console.md
// lists.
func TestRoleTable(t *testing.T) {
	want := map[perm]string{
		permMerchantRead: "admin finance readonly",
		permCardWrite:    "admin",
		permReplay:       "admin finance",
		permOperate:      "operator",
		permAudit:        "operator auditor",
		permSignedIn:     "admin finance readonly operator auditor",
		permUsers:        "admin",
		permHouseUsers:   "operator",
		permCloses:       "admin finance operator auditor",
	}
	all := []Role{RoleAdmin, RoleFinance, RoleReadonly, RoleOperator, RoleAuditor}
	for p, roles := range want {
		var got []string
		for _, r := range all {
			if r.may(p) {
				got = append(got, string(r))
			}
		}
		if strings.Join(got, " ") != roles {
			t.Errorf("perm %d: %v, want %s", p, got, roles)
		}
	}
}

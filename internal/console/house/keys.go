package house

import (
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paygate/gateway/internal/console/host"
	"github.com/paygate/gateway/internal/merchant"
	"github.com/paygate/gateway/ledger"
)

// Rolling a merchant's key on the operator's merchant page: the CLI's
// merchant roll-key, the same ledger calls (RollPublicKey without a held
// previous key, since the operator holds none; RollSigningKey). The new key
// is shown once, on the answer to the POST (never stored in the clear,
// Cache-Control: no-store), with the end of the overlap.
//
// Each render of the merchant page gives the form its own idempotency key:
// a roll sent twice would otherwise roll twice, and the second roll would
// keep the first new key (which no one has yet) as the previous one and
// end the merchant's working key at once. The second answer is the
// ledger's replay instead, which says the roll was made and has no key.

// keyOverlapHoursMax is the longest overlap, the ledger's bound in hours.
const keyOverlapHoursMax = int(merchant.KeyOverlapMax / time.Hour)

type keyRolledData struct {
	M        *merchant.Merchant
	Roll     *merchant.KeyRoll
	Overlap  int
	Replayed bool
}

func (s *pages) rollKey(w http.ResponseWriter, r *http.Request, u *host.User) {
	m := s.operatorMerchant(w, r)
	if m == nil {
		return
	}
	value := map[string]string{"key": r.PostFormValue("key"), "overlapHours": strings.TrimSpace(r.PostFormValue("overlapHours"))}
	kind := value["key"]
	if kind != merchant.KeyPublic && kind != merchant.KeySigning {
		s.refuse(w, r, m, "roll_key", "key: must be public or signing", value)
		return
	}
	h := value["overlapHours"]
	hours, err := strconv.Atoi(h)
	if len(h) > 3 || strings.Trim(h, "0123456789") != "" || err != nil || hours > keyOverlapHoursMax {
		s.refuse(w, r, m, "roll_key", "overlapHours: must be a whole number of hours from 0 to "+strconv.Itoa(keyOverlapHoursMax), value)
		return
	}
	idem := r.PostFormValue("idempotencyKey")
	if !rollFormKey.valid(idem) {
		s.refuse(w, r, m, "roll_key", "idempotencyKey: missing or malformed; open the merchant's page again", value)
		return
	}
	overlap := time.Duration(hours) * time.Hour
	key := &ledger.Idempotency{Key: idem, Scope: ledger.ScopeLedger}
	a, ok := s.h.Begin(w, r, m.ID, "merchant.roll_key", m.ShopNo, kind+", overlap "+strconv.Itoa(hours)+" h, key "+idem) // audit_intent.go
	if !ok {
		return
	}
	var roll *merchant.KeyRoll
	if kind == merchant.KeyPublic {
		roll, err = s.d.Merchants.RollPublicKey(r.Context(), m.ID, overlap, false, key)
	} else {
		roll, err = s.d.Merchants.RollSigningKey(r.Context(), m.ID, overlap, key)
	}
	if err != nil {
		a.Finish(err, 0, "", "")
		s.commandError(w, r, m, "roll_key", value, err)
		return
	}
	replayed := roll.Replayed || roll.Key == ""
	if replayed {
		a.Finish(nil, 0, "", "replayed (no new key)")
	} else {
		a.Finish(nil, 0, "", "") // never the key
	}
	s.h.Render(w, r, http.StatusOK, "key_rolled", "New "+kind+" key of "+m.ShopNo, keyRolledData{M: m, Roll: roll, Overlap: hours, Replayed: replayed})
}

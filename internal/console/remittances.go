package console

import (
	"encoding/json"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"time"

	"github.com/paygate/gateway/internal/remittance"
)

// A merchant's remittances: a list, newest first with keyset paging, and
// one remittance with every step of its lifecycle. The detail is the
// remittance domain's read (what GET /shop/remittance/query answers); the
// list is the console's own bounded query (no domain lists remittances).
// The merchant is the session's: another merchant's txId is answered as an
// unknown one.

var (
	txIDRE         = regexp.MustCompile(`^rmt_[a-z0-9]{20}$`)
	remitStatusSet = map[string]bool{"": true, remittance.RemitSubmitted: true, remittance.RemitScreening: true,
		remittance.RemitInFlight: true, remittance.RemitSettled: true, remittance.RemitReturned: true, remittance.RemitRejected: true}
	remitStatuses = []string{remittance.RemitSubmitted, remittance.RemitScreening, remittance.RemitInFlight,
		remittance.RemitSettled, remittance.RemitReturned, remittance.RemitRejected}
)

type remittancesData struct {
	Status   string
	Statuses []string
	Rows     []remitRow
	First    bool   // the first page (no "before")
	Next     string // the next page's URL, "" on the last
}

func (s *Server) remittances(w http.ResponseWriter, r *http.Request, sess *session) {
	q := r.URL.Query()
	status, before := q.Get("status"), q.Get("before")
	if !remitStatusSet[status] {
		s.fail(w, r, http.StatusBadRequest, "status: must be SUBMITTED, SCREENING, IN_FLIGHT, SETTLED, RETURNED or REJECTED")
		return
	}
	if before != "" && !txIDRE.MatchString(before) {
		s.fail(w, r, http.StatusBadRequest, "before: must be a txId (rmt_ and 20 letters or digits)")
		return
	}
	rows, more, err := s.remittancePage(r.Context(), sess.user.MerchantID, status, before)
	if err != nil {
		s.internal(w, r, err)
		return
	}
	d := remittancesData{Status: status, Statuses: remitStatuses, Rows: rows, First: before == ""}
	if more {
		v := url.Values{"before": {rows[len(rows)-1].TxID}}
		if status != "" {
			v.Set("status", status)
		}
		d.Next = "/remittances?" + v.Encode()
	}
	s.render(w, r, http.StatusOK, "remittances", "Remittances", d)
}

// beneficiaryView is what the page shows of the beneficiary: the account
// number masked to its last four characters, as the API's query does.
type beneficiaryView struct {
	Name, Country, AccountNo, BankSWIFT string
}

type remittanceData struct {
	R           *remittance.Remittance
	Beneficiary beneficiaryView
	Total       int64 // amount + fee: what the funding account was debited
	TotalOK     bool  // false if the sum does not fit (then it is not shown)
	Steps       []remitStepView
}

// remitStepView is one step of the lifecycle with the time since the one
// before it.
type remitStepView struct {
	remittance.RemittanceStep
	After time.Duration // since the previous step; 0 for the first
}

func (s *Server) remittance(w http.ResponseWriter, r *http.Request, sess *session) {
	id := r.PathValue("txId")
	if !txIDRE.MatchString(id) {
		s.notFound(w, r)
		return
	}
	rem, err := s.cfg.Remittances.Remittance(r.Context(), sess.user.MerchantID, id)
	if err != nil {
		s.domainError(w, r, err)
		return
	}
	d := remittanceData{R: rem, Beneficiary: beneficiaryOf(rem.Beneficiary)}
	if rem.Amount <= math.MaxInt64-rem.Fee {
		d.Total, d.TotalOK = rem.Amount+rem.Fee, true
	}
	for i, st := range rem.History {
		v := remitStepView{RemittanceStep: st}
		if i > 0 {
			v.After = st.At.Sub(rem.History[i-1].At).Round(time.Millisecond)
		}
		d.Steps = append(d.Steps, v)
	}
	s.render(w, r, http.StatusOK, "remittance", "Remittance "+rem.TxID, d)
}

// beneficiaryOf reads the stored beneficiary; what does not parse shows
// empty (the API validated it when it was made).
func beneficiaryOf(raw json.RawMessage) beneficiaryView {
	var b struct {
		Name      string `json:"name"`
		Country   string `json:"country"`
		AccountNo string `json:"account_no"`
		BankSWIFT string `json:"bank_swift"`
	}
	_ = json.Unmarshal(raw, &b)
	return beneficiaryView{Name: b.Name, Country: b.Country, AccountNo: maskTail(b.AccountNo), BankSWIFT: b.BankSWIFT}
}

// maskTail keeps the last four characters of an account number behind
// bullets; four or fewer characters are all masked.
func maskTail(s string) string {
	r := []rune(s)
	if len(r) <= 4 {
		return "••••"
	}
	return "••••" + string(r[len(r)-4:])
}

package house

import (
	"net/http"
	"regexp"
	"strconv"
	"time"

	"github.com/paygate/gateway/internal/console/host"
)

// Network holds near expiry: the open authorizations whose hold the expiry
// worker will release within a window the operator picks, soonest first, a
// page at a time. Past-due holds (the worker has not run yet) come first,
// marked overdue.

// holdWindows are the windows offered; anything else is refused.
var holdWindows = []struct {
	Name string
	D    time.Duration
}{{"1h", time.Hour}, {"6h", 6 * time.Hour}, {"24h", 24 * time.Hour}, {"72h", 72 * time.Hour}, {"7d", 7 * 24 * time.Hour}}

const holdWindowDefault = "24h"

var authIDRE = regexp.MustCompile(`^auth_[a-z0-9]{20}$`)

type holdView struct {
	holdRow
	Left    time.Duration
	Overdue bool
}

type holdsData struct {
	Within  string
	Windows []string
	Until   time.Time
	Holds   []holdView
	Next    string
}

func (s *pages) holds(w http.ResponseWriter, r *http.Request, u *host.User) {
	q := r.URL.Query()
	within := q.Get("within")
	if within == "" {
		within = holdWindowDefault
	}
	var window time.Duration
	d := holdsData{Within: within}
	for _, hw := range holdWindows {
		d.Windows = append(d.Windows, hw.Name)
		if hw.Name == within {
			window = hw.D
		}
	}
	if window == 0 {
		s.h.Fail(w, r, http.StatusBadRequest, "within: must be one of 1h, 6h, 24h, 72h, 7d")
		return
	}
	// The cursor of the next page: the last hold's expiry (Unix
	// microseconds) and id.
	var afterAt time.Time
	afterID := q.Get("afterId")
	if a := q.Get("afterAt"); a != "" || afterID != "" {
		us, err := strconv.ParseInt(a, 10, 64)
		if err != nil || us < 0 || us > 1<<53 {
			s.h.Fail(w, r, http.StatusBadRequest, "afterAt: must be microseconds since 1970, as the Next link gives")
			return
		}
		if !authIDRE.MatchString(afterID) {
			s.h.Fail(w, r, http.StatusBadRequest, "afterId: must be an authorization id")
			return
		}
		afterAt = time.UnixMicro(us).UTC()
	}
	now := s.h.Now()
	d.Until = now.Add(window)
	hs, err := s.d.Holds.HoldsExpiring(r.Context(), d.Until, afterAt, afterID, HoldsPageMax)
	if err != nil {
		s.h.Internal(w, r, err)
		return
	}
	for _, h := range hs {
		left := h.ExpiresAt.Sub(now).Truncate(time.Minute)
		d.Holds = append(d.Holds, holdView{holdRow: h, Left: left, Overdue: left < 0})
	}
	if len(hs) == HoldsPageMax {
		last := hs[len(hs)-1]
		d.Next = "/operator/holds?within=" + within + "&afterAt=" + strconv.FormatInt(last.ExpiresAt.UnixMicro(), 10) + "&afterId=" + last.AuthID
	}
	s.h.Render(w, r, http.StatusOK, "holds", "Holds near expiry", d)
}

package console

import "sync"

// A burst of tries of one user (docs/console.md, "Lockout"). The slots
// bound how many passwords of a burst are checked; this makes sure that
// the right password inside a burst does not sign in either: a try that
// ran while another try of the same user was being checked is "crowded",
// and a crowded try is refused even when its password and code are right
// (it is counted, as every try). A person types one password at a time;
// a burst is a script, and the holder of the password loses nothing by
// sending it again alone. Tracked in this process: across processes,
// store.succeed refuses a try when another began after it.

type userTry struct{ crowded bool }

type tryTracker struct {
	mu   sync.Mutex
	open map[int64][]*userTry // the tries of each user being checked
}

// begin marks the start of a check of user's password; the tries of the
// user already open and this one are crowded.
func (tt *tryTracker) begin(user int64) *userTry {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.open == nil {
		tt.open = map[int64][]*userTry{}
	}
	t := &userTry{}
	for _, o := range tt.open[user] {
		o.crowded, t.crowded = true, true
	}
	tt.open[user] = append(tt.open[user], t)
	return t
}

// crowded reports whether another try of the user has run beside t.
func (tt *tryTracker) crowded(t *userTry) bool {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return t.crowded
}

// end closes the try.
func (tt *tryTracker) end(user int64, t *userTry) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	ts := tt.open[user]
	for i, o := range ts {
		if o == t {
			ts = append(ts[:i], ts[i+1:]...)
			break
		}
	}
	if len(ts) == 0 {
		delete(tt.open, user) // the map holds only users with open tries
	} else {
		tt.open[user] = ts
	}
}

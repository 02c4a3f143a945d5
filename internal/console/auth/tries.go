package auth

import "sync"

// A burst of tries of one user (docs/console.md, "Lockout"). The slots
// bound how many passwords of a burst are checked; this makes sure that
// the right password inside a burst does not sign in either: a try that
// ran while another try of the same user was being checked is "crowded",
// and a crowded try is refused even when its password and code are right
// (it is counted, as every try). A person types one password at a time;
// a burst is a script, and the holder of the password loses nothing by
// sending it again alone. Tracked in this process: across processes,
// the store's Succeed refuses a try when another began after it.

type Try struct{ crowded bool }

type Tries struct {
	mu   sync.Mutex
	open map[int64][]*Try // the tries of each user being checked
}

// Begin marks the start of a check of user's password; the tries of the
// user already open and this one are crowded.
func (tt *Tries) Begin(user int64) *Try {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	if tt.open == nil {
		tt.open = map[int64][]*Try{}
	}
	t := &Try{}
	for _, o := range tt.open[user] {
		o.crowded, t.crowded = true, true
	}
	tt.open[user] = append(tt.open[user], t)
	return t
}

// Crowded reports whether another try of the user has run beside t.
func (tt *Tries) Crowded(t *Try) bool {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	return t.crowded
}

// End closes the try.
func (tt *Tries) End(user int64, t *Try) {
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

package pgcluster

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// KillServer sends SIGKILL to the postmaster of the server in dataDir and to
// every process it started, as losing the machine would. Killing the
// postmaster's process group is not enough: each backend, WAL sender and
// auxiliary process calls setsid() at start (PostgreSQL's
// InitPostmasterChild), so they outlive a group kill until they notice the
// postmaster's death — long enough for a backend to finish a COMMIT that
// its WAL sender still ships to the standby (seen in the chaos run of
// docs/ha.md: a write acknowledged 145 ms after the "kill"). The children
// are found before anything is killed, and killed first.
func KillServer(dataDir string) { SignalServer(dataDir, syscall.SIGKILL) }

// SignalServer sends sig to the postmaster of the server in dataDir and to
// every process it started, children first (KillServer). SIGSTOP freezes
// the whole server as a hung machine or a partition would look to its
// clients (connections open, nothing answered, no RST); SIGCONT resumes it.
func SignalServer(dataDir string, sig syscall.Signal) {
	raw, err := os.ReadFile(filepath.Join(dataDir, "postmaster.pid")) //nolint:gosec // the server's own pid file
	if err != nil {
		return
	}
	pm, err := strconv.Atoi(strings.TrimSpace(strings.SplitN(string(raw), "\n", 2)[0]))
	if err != nil || pm <= 1 {
		return
	}
	victims := append(children(pm), pm)
	for _, p := range victims {
		_ = syscall.Kill(p, sig)
	}
}

// children are the processes whose parent is pid (/proc).
func children(pid int) []int {
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat") //nolint:gosec // procfs
		if err != nil {
			continue
		}
		s := string(b)
		// The command name in parentheses may hold spaces: the fields
		// after the last ')' are state, then the parent's pid.
		if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
			f := strings.Fields(s[i+2:])
			if len(f) >= 2 && f[1] == strconv.Itoa(pid) {
				out = append(out, p)
			}
		}
	}
	return out
}

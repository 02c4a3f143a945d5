package main

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/paygate/gateway/internal/httpserve"
)

// buildCommit is the commit `make build` passes with -ldflags -X, for
// builds the go command does not stamp (a git worktree, GOFLAGS with
// -buildvcs=false); vcs.revision wins when present.
var buildCommit string

// cmdVersion prints the module's version and the commit it was built from
// (runtime/debug.ReadBuildInfo: the go command stamps vcs.revision when it
// builds from a git checkout), so that a report names what ran.
func cmdVersion(_ context.Context, e *env, args []string) error {
	fs := newFlags(e, "version", "Print the gateway's module version and commit.")
	if help, err := parseFlags(fs, args); help || err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, versionLine(debug.ReadBuildInfo()))
	return nil
}

// versionLine is "gateway VERSION (commit REV[, modified], TIME) GOVERSION";
// what the build did not record reads "unknown".
func versionLine(bi *debug.BuildInfo, ok bool) string {
	version, rev, when, modified, goVersion := "unknown", "unknown", "", false, "unknown"
	if buildCommit != "" {
		rev = buildCommit
	}
	if ok {
		goVersion = bi.GoVersion
		if bi.Main.Version != "" {
			version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value
			case "vcs.time":
				when = ", " + s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
	}
	if modified {
		rev += ", modified"
	}
	return fmt.Sprintf("gateway %s (commit %s%s) %s", version, rev, when, goVersion)
}

// buildInfo is what gateway_build_info reports: the same version and
// commit as `gateway version`, and the Go version.
func buildInfo(bi *debug.BuildInfo, ok bool) httpserve.BuildInfo {
	b := httpserve.BuildInfo{Commit: buildCommit}
	if !ok {
		return b
	}
	b.GoVersion, b.Version = bi.GoVersion, bi.Main.Version
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			b.Commit = s.Value
		}
	}
	return b
}

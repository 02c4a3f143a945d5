package main

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paygate/gateway/internal/pgha"
)

// The schedule of ha run's backups: a full at once into an empty
// repository, then a differential every interval, and a full when the
// newest full is fullEvery intervals old.
func TestNextBackup(t *testing.T) {
	now := time.Date(2026, 11, 27, 12, 0, 0, 0, time.UTC)
	day := 24 * time.Hour
	b := func(kind string, ago time.Duration) pgha.BackupInfo {
		return pgha.BackupInfo{Type: kind, Start: now.Add(-ago - time.Minute), Stop: now.Add(-ago)}
	}
	for _, tt := range []struct {
		name    string
		backups []pgha.BackupInfo
		kind    string
		wait    time.Duration
	}{
		{"empty repository", nil, "full", 0},
		{"only a differential", []pgha.BackupInfo{b("diff", time.Hour)}, "full", 0},
		{"a full an hour ago", []pgha.BackupInfo{b("full", time.Hour)}, "diff", 23 * time.Hour},
		{"a full and a diff", []pgha.BackupInfo{b("full", 3*day), b("diff", 2*time.Hour)}, "diff", 22 * time.Hour},
		{"overdue diff", []pgha.BackupInfo{b("full", 3*day), b("diff", 2*day)}, "diff", 0},
		{"the full is due first", []pgha.BackupInfo{b("full", 6*day+20*time.Hour), b("diff", 2*time.Hour)}, "full", 4 * time.Hour},
		{"the full is overdue", []pgha.BackupInfo{b("full", 9*day), b("diff", time.Hour)}, "full", 0},
	} {
		kind, wait := nextBackup(tt.backups, now, day)
		if kind != tt.kind || wait != tt.wait {
			t.Errorf("%s: %s in %s, want %s in %s", tt.name, kind, wait, tt.kind, tt.wait)
		}
	}
}

// ha run's gateway reports the age of the formation's newest backup
// (GATEWAY_BACKUP_REPO → gateway_backup_age_seconds), unless the operator
// names another repository.
func TestGatewayEnvBackupRepo(t *testing.T) {
	for _, tt := range []struct {
		env  []string
		want string
	}{
		{[]string{"PATH=/bin"}, "GATEWAY_BACKUP_REPO=/f/backup"},
		{[]string{"GATEWAY_BACKUP_REPO="}, "GATEWAY_BACKUP_REPO=/f/backup"},
		{[]string{"GATEWAY_BACKUP_REPO=/elsewhere"}, "GATEWAY_BACKUP_REPO=/elsewhere"},
	} {
		got := gatewayEnv(tt.env, "postgres://u@h/db", "/gw", "/f/backup")
		last := ""
		for _, kv := range got {
			if strings.HasPrefix(kv, "GATEWAY_BACKUP_REPO=") {
				last = kv // the last one wins in exec's environment
			}
		}
		if last != tt.want || !slices.Contains(got, "DATABASE_URL=postgres://u@h/db") || !slices.Contains(got, "GATEWAY_DATA_DIR=/gw") {
			t.Errorf("env %v: %v; want %s", tt.env, got, tt.want)
		}
	}
}

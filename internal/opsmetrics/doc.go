// Package opsmetrics is what the on-call engineer reads besides the
// requests: the database's replication, WAL archive and backups, the
// backlogs of callbacks, remittances and holds (State, read by one
// periodic collector, never a query per scrape), the workers' health and
// the failovers the gateway saw (docs/operations.md, "Metrics"). It
// imports nothing of the module: internal/app hands it the database and
// functions to read, and registers its collectors with httpserve.Metrics.
package opsmetrics

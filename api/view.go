package api

import (
	"time"

	"github.com/paygate/gateway/api/views"
	"github.com/paygate/gateway/postings"
)

// The answers' shapes and their rendering helpers are package views'
// (api/views); these short names keep the handlers that still build their
// answer here (the bill's lines) reading as before.

func timestamp(t time.Time) string { return views.Timestamp(t) }

func money(minor int64, code string) postings.Money { return views.Money(minor, code) }

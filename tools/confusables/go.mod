module github.com/paygate/gateway/tools/confusables

go 1.26.8

require (
	go.mau.fi/util v0.11.0
	golang.org/x/text v0.43.0
)

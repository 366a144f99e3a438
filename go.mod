module github.com/seed6eee2ec7/crystalball

go 1.26.8

require (
	github.com/cockroachdb/datadriven v1.0.3
	github.com/vmihailenco/msgpack/v5 v5.3.6
	github.com/zeebo/xxh3 v1.1.0
	go.uber.org/goleak v1.3.0
	go.uber.org/zap v1.28.0
)

require (
	github.com/klauspost/cpuid/v2 v2.2.10 // indirect
	github.com/pmezard/go-difflib v1.0.0 // indirect
	github.com/vmihailenco/tagparser/v2 v2.0.0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	golang.org/x/sys v0.30.0 // indirect
)

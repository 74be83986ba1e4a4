// Package parity holds the tests that compare profq's reports with pprof's.
package parity

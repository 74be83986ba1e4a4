// Package parity holds the tests that compare profq's reports with pprof's, and its
// speedscope output with speedscope's file-format schema.
package parity

// Package app is a small workload for callgrind: hashing, sorting, JSON encoding and
// allocation, so that the runtime's allocator and garbage collector run too.
package app

import (
	"crypto/sha256"
	"encoding/json"
	"sort"
	"strconv"
)

type item struct {
	Name  string `json:"name"`
	Score int    `json:"score"`
}

// Score hashes and scores n items.
func Score(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		h := sha256.Sum256([]byte(strconv.Itoa(i)))
		s += int(h[0])
	}
	return s
}

// Process builds, sorts and encodes n items.
func Process(n int) int {
	items := make([]item, n)
	for i := range items {
		items[i] = item{Name: "item-" + strconv.Itoa(i*7919%n), Score: Score(8)}
	}
	sort.Slice(items, func(a, b int) bool { return items[a].Name < items[b].Name })
	out, _ := json.Marshal(items)
	return len(out)
}

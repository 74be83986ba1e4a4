package report

// Statuses of a SymbolizedMapping.
const (
	// SymbolizeSymbolized: the binary was found and read.
	SymbolizeSymbolized = "symbolized"
	// SymbolizeNotFound: no binary was found for the mapping.
	SymbolizeNotFound = "not_found"
	// SymbolizeFailed: a binary was found but could not be used.
	SymbolizeFailed = "failed"
	// SymbolizeSkipped: the mapping already had symbols, or names no binary ([vdso]).
	SymbolizeSkipped = "skipped"
)

// SymbolizedMapping says what symbolization did for one mapping of a profile.
type SymbolizedMapping struct {
	// ID is the mapping's ID in the profile.
	ID uint64 `json:"id"`
	// File is the mapping's file as the profile recorded it.
	File string `json:"file"`
	// BuildID is the mapping's build ID, or "".
	BuildID string `json:"build_id"`
	// Binary is the file that was read (the --binary file, one found on the search path, or
	// File), or "" when none was.
	Binary string `json:"binary"`
	// Status is "symbolized", "not_found", "failed" or "skipped".
	Status string `json:"status"`
	// Reason says why a mapping was not found, failed or was skipped, or "".
	Reason string `json:"reason"`
	// Locations counts the mapping's locations.
	Locations int `json:"locations"`
	// Resolved counts the locations that got a function (or at least a file and line)
	// from the binary.
	Resolved int `json:"resolved"`
}

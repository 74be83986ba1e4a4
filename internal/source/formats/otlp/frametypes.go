package otlp

import "fmt"

// frameTypes records the frame type of the frames of each mapping, by mapping file, as an
// input states it (OTLP's profile.frame.type location attribute): "kernel" for vmlinux and
// kernel modules, "native" for binaries and libraries, "jvm" for the "[jvm]" mapping profq
// gives frames without one. pprof's model has no per-location field for it, and a mapping's
// frames share one type in what profilers write, so the mapping carries it. A mapping whose
// frames state different types has none ("").
type frameTypes map[string]string

// add records that a frame of the mapping file has type t. warn is told once per mapping
// whose frames disagree.
func (ft *frameTypes) add(file, t string, warn func(string)) {
	if *ft == nil {
		*ft = make(frameTypes)
	}
	old, seen := (*ft)[file]
	switch {
	case !seen:
		(*ft)[file] = t
	case old != "" && old != t:
		(*ft)[file] = ""
		warn(fmt.Sprintf("mapping %q holds frames of types %s and %s; its frames' type is left unknown", file, old, t))
	}
}

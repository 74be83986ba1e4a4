package report

// FrameTypes combines the frame types the inputs state, each by mapping file: a mapping keeps
// its type when every input that states one agrees, and has "" otherwise. It returns nil
// when no input states any.
func FrameTypes(inputs []Input) map[string]string {
	var out map[string]string
	for _, in := range inputs {
		for file, t := range in.FrameTypes {
			if out == nil {
				out = make(map[string]string)
			}
			if old, seen := out[file]; seen && old != t {
				t = ""
			}
			out[file] = t
		}
	}
	return out
}

package cli

import (
	"bytes"
	"strings"
	"testing"
)

// TestMergeRefusesTerminal checks that the binary profile is not written to a terminal, and
// is written to stdout otherwise.
func TestMergeRefusesTerminal(t *testing.T) {
	for _, terminal := range []bool{true, false} {
		var out, errb bytes.Buffer
		code := Run([]string{"merge", "../../testdata/profiles/cpu.pb.gz"}, IO{In: strings.NewReader(""), Out: &out, Err: &errb, OutIsTerminal: terminal})
		switch {
		case terminal && (code != ExitUsage || out.Len() != 0 || !strings.Contains(errb.String(), "not to a terminal; use -o FILE")):
			t.Errorf("to a terminal: exit %d, %d bytes out, stderr %q; want exit 2, nothing written", code, out.Len(), errb.String())
		case !terminal && (code != ExitOK || !bytes.HasPrefix(out.Bytes(), []byte{0x1f, 0x8b})):
			t.Errorf("to a pipe: exit %d, stderr %q; want exit 0 and gzip data", code, errb.String())
		}
	}
}

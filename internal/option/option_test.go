package option

import (
	"errors"
	"fmt"
	"testing"
)

type other struct{}

func (other) Error() string { return "other" }
func (other) Usage() bool   { return false }

func TestError(t *testing.T) {
	err := Errorf("granularity", "%q is not one of %s", "x", "functions, lines")
	if got, want := err.Error(), `--granularity: "x" is not one of functions, lines`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got := New("standard input (-) can be read only once").Error(); got != "standard input (-) can be read only once" {
		t.Errorf("without a name: %q", got)
	}
	wrapped := fmt.Errorf("loading: %w", err)
	if !IsUsage(wrapped) {
		t.Error("a wrapped option error is not a usage error")
	}
	var e *Error
	if !errors.As(wrapped, &e) || e.Name != "granularity" {
		t.Errorf("the option is not found in %v", wrapped)
	}
	for _, err := range []error{errors.New("plain"), other{}, fmt.Errorf("x: %w", other{}), nil} {
		if IsUsage(err) {
			t.Errorf("%v is taken for a usage error", err)
		}
	}
}
